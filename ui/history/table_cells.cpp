// The compare view's read-only tables and their cells (see table_cells.h).
#include "ui/history/table_cells.h"

#include <QHeaderView>
#include <QTableWidget>
#include <cmath>

namespace tokamak::ui {

QTableWidget* makeReadOnlyTable(QWidget* parent) {
  auto* t = new QTableWidget(parent);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->verticalHeader()->setVisible(false);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

QTableWidgetItem* tableCell(const QString& text, bool number) {
  auto* item = new QTableWidgetItem(text);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QString formatOrDash(const char* format, double value) {
  return std::isnan(value) ? QStringLiteral("-") : QString::asprintf(format, value);
}

}  // namespace tokamak::ui
