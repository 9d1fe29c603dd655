// The compare view's tables (scoreboard, config differences) as one kind: read-only, whole rows selected,
// numbers right-aligned, a value that was not measured shown as "-".
#pragma once
#include <QString>

class QTableWidget;
class QTableWidgetItem;
class QWidget;

namespace tokamak::ui {

QTableWidget* makeReadOnlyTable(QWidget* parent);
QTableWidgetItem* tableCell(const QString& text, bool number = false);
// printf-style `format` of `value`, or "-" for NaN (a run without that measurement).
QString formatOrDash(const char* format, double value);

}  // namespace tokamak::ui
