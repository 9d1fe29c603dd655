// The compare view's "Config differences" tab: one row per config key in which the compared runs differ, one
// column per run (the scoreboard's diff_keys / diff_values, as `tokamak runs compare` prints them).
#pragma once
#include <QStringList>

#include "engine/base/store/scoreboard.h"

class QTableWidget;

namespace tokamak::ui {

// Fills `table` (made by makeReadOnlyTable); `runLabels` head the columns after "Config key".
void showConfigDiff(QTableWidget* table, const tokamak::Scoreboard& board, const QStringList& runLabels);

}  // namespace tokamak::ui
