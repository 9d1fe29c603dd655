// The compare view's scoreboard: a row per run (tok/s, speedup over the baseline, MFU, peak memory, final and
// best val loss, and with a target val loss the time and steps to it), then a row per group of runs in
// italics (their means; tok/s and time to target with their spread). The numbers are the engine's
// (engine/base/store/scoreboard.h), so they match `tokamak runs compare`.
#pragma once
#include "engine/base/store/scoreboard.h"

class QTableWidget;

namespace tokamak::ui {

// Fills `table` (made by makeReadOnlyTable); each run's name in its curve's colour (runColor).
void showScoreboard(QTableWidget* table, const tokamak::Scoreboard& board);

}  // namespace tokamak::ui
