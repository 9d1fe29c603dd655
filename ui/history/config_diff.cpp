// The config keys in which compared runs differ, as a table (see config_diff.h).
#include "ui/history/config_diff.h"

#include <QTableWidget>

#include "ui/history/table_cells.h"

namespace tokamak::ui {

void showConfigDiff(QTableWidget* table, const tokamak::Scoreboard& board, const QStringList& runLabels) {
  table->clear();
  const QStringList headers = QStringList{QObject::tr("Config key")} + runLabels;
  table->setColumnCount(int(headers.size()));
  table->setHorizontalHeaderLabels(headers);
  table->setRowCount(int(board.diff_keys.size()));
  for (int k = 0; k < int(board.diff_keys.size()); ++k) {
    table->setItem(k, 0, tableCell(QString::fromStdString(board.diff_keys[size_t(k)])));
    for (int r = 0; r < int(board.diff_values[size_t(k)].size()); ++r)
      table->setItem(k, r + 1, tableCell(QString::fromStdString(board.diff_values[size_t(k)][size_t(r)])));
  }
  table->resizeColumnsToContents();
  if (board.diff_keys.empty() && !runLabels.isEmpty())
    table->setToolTip(QObject::tr("The runs' configs are identical."));
}

}  // namespace tokamak::ui
