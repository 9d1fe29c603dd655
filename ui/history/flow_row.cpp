// FlowRow: lines of controls, as many as the width needs (see flow_row.h).
#include "ui/history/flow_row.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QStyle>
#include <QWidget>

namespace tokamak::ui {

FlowRow::FlowRow(QWidget* parent) : QLayout(parent) { setContentsMargins(0, 0, 0, 0); }

FlowRow::~FlowRow() {
  while (QLayoutItem* item = takeAt(0)) delete item;
}

void FlowRow::addItem(QLayoutItem* item) { items_.append(item); }

QLayoutItem* FlowRow::takeAt(int index) { return index >= 0 && index < items_.size() ? items_.takeAt(index) : nullptr; }

int FlowRow::gap() const {
  if (spacing() >= 0) return spacing();
  const QWidget* w = parentWidget();
  return w ? w->style()->pixelMetric(QStyle::PM_LayoutHorizontalSpacing, nullptr, w) : 6;
}

int FlowRow::heightForWidth(int width) const { return arrange(QRect(0, 0, width, 0), false); }

QSize FlowRow::minimumSize() const {
  QSize least;
  for (const QLayoutItem* item : items_) least = least.expandedTo(item->minimumSize());
  const QMargins m = contentsMargins();
  return least + QSize(m.left() + m.right(), m.top() + m.bottom());
}

QSize FlowRow::sizeHint() const {
  int width = 0, height = 0;
  for (const QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    width += (width > 0 ? gap() : 0) + item->sizeHint().width();
    height = std::max(height, item->sizeHint().height());
  }
  const QMargins m = contentsMargins();
  return QSize(width + m.left() + m.right(), height + m.top() + m.bottom());
}

void FlowRow::setGeometry(const QRect& rect) {
  QLayout::setGeometry(rect);
  arrange(rect, true);
}

int FlowRow::arrange(const QRect& rect, bool place) const {
  const QRect area = rect.marginsRemoved(contentsMargins());
  const int space = gap();
  int y = area.y();
  QList<QLayoutItem*> line;
  auto finishLine = [&] {
    if (line.isEmpty()) return;
    int used = -space, growing = 0, height = 0;
    for (QLayoutItem* item : line) {
      used += space + item->sizeHint().width();
      growing += (item->expandingDirections() & Qt::Horizontal) ? 1 : 0;
      height = std::max(height, item->sizeHint().height());
    }
    // What the line leaves goes to its growing items (a filter box), shared equally.
    int extra = std::max(0, area.width() - used);
    int x = area.x();
    for (QLayoutItem* item : line) {
      int width = std::min(item->sizeHint().width(), area.width());
      if (growing > 0 && (item->expandingDirections() & Qt::Horizontal)) {
        const int share = extra / growing;
        width += share, extra -= share, --growing;
      }
      const int h = item->hasHeightForWidth() ? item->heightForWidth(width) : item->sizeHint().height();
      if (place) item->setGeometry(QRect(x, y + (height - std::min(h, height)) / 2, width, std::min(h, height)));
      x += width + space;
    }
    y += height + space;
    line.clear();
  };
  int x = area.x();
  for (QLayoutItem* item : items_) {
    if (item->isEmpty()) continue;
    const int width = item->sizeHint().width();
    if (!line.isEmpty() && x + width > area.x() + area.width()) finishLine(), x = area.x();
    line.append(item);
    x += width + space;
  }
  finishLine();
  const int used = y - area.y() - (y > area.y() ? space : 0);
  const QMargins m = contentsMargins();
  return used + m.top() + m.bottom();
}

QWidget* labelled(const QString& label, QWidget* field) {
  auto* pair = new QWidget;
  auto* row = new QHBoxLayout(pair);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(label));
  row->addWidget(field, 1);
  return pair;
}

}  // namespace tokamak::ui
