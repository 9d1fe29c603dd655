// SectionColumns: one or two columns of sections, whichever fits the width (see section_columns.h).
#include "ui/setup/section_columns.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QScrollBar>
#include <QVBoxLayout>
#include <algorithm>

namespace tokamak::ui {

SectionColumns::SectionColumns(QWidget* parent) : QScrollArea(parent) {
  content_ = new QWidget;
  row_ = new QHBoxLayout(content_);
  left_ = new QVBoxLayout;
  right_ = new QVBoxLayout;
  left_->addStretch(1);
  right_->addStretch(1);
  row_->addLayout(left_, 1);
  row_->addLayout(right_, 0);
  setWidget(content_);
  setWidgetResizable(true);
  setFrameShape(QFrame::NoFrame);
  // The area never gets narrower than one column (setMinimumWidth in reflow), so this bar stays hidden; it is
  // a safety net, not a way to reach controls.
  setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  // A section whose size hint grows (a longer device name, a button's new text) may need one column again.
  content_->installEventFilter(this);
}

void SectionColumns::addSection(QWidget* section, int column) {
  sections_.append({section, std::clamp(column, 0, 1)});
  QVBoxLayout* into = columns_ == 2 && column == 1 ? right_ : left_;
  into->insertWidget(into->count() - 1, section);  // before the closing stretch
  reflow();
}

int SectionColumns::widthFor(int columns) const {
  int widest[2] = {0, 0};
  for (const Section& s : sections_) {
    if (s.widget->isHidden()) continue;
    const int need = std::max(s.widget->sizeHint().width(), s.widget->minimumSizeHint().width());
    int& w = widest[columns == 2 ? s.column : 0];
    w = std::max(w, need);
  }
  const QMargins m = row_->contentsMargins();
  int width = widest[0] + m.left() + m.right();
  if (columns == 2) width += widest[1] + row_->spacing();
  // The vertical bar is counted always: a column that fits only without it would be cut once it appears.
  return width + 2 * frameWidth() + verticalScrollBar()->sizeHint().width();
}

void SectionColumns::resizeEvent(QResizeEvent* event) {
  QScrollArea::resizeEvent(event);
  reflow();
}

bool SectionColumns::eventFilter(QObject* watched, QEvent* event) {
  if (watched == content_ && event->type() == QEvent::LayoutRequest) reflow();
  return QScrollArea::eventFilter(watched, event);
}

void SectionColumns::reflow() {
  setMinimumWidth(widthFor(1));
  const int columns = width() >= widthFor(2) ? 2 : 1;
  if (columns == columns_) return;
  columns_ = columns;
  for (const Section& s : sections_) {
    left_->removeWidget(s.widget);
    right_->removeWidget(s.widget);
  }
  for (const Section& s : sections_) {
    QVBoxLayout* into = columns == 2 && s.column == 1 ? right_ : left_;
    into->insertWidget(into->count() - 1, s.widget);
  }
  row_->setStretch(1, columns == 2 ? 1 : 0);  // the empty right column takes no width
}

}  // namespace tokamak::ui
