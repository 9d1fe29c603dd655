// What the compare view's two charts beside the scoreboard draw, taken from the scoreboard: each run's step
// profile (a stacked bar of ms per step by phase, ui/plots/phase_bars.h) and the ladder's rungs for the
// speed-up waterfall (ui/plots/speedup_waterfall.h).
#pragma once
#include <vector>

#include "engine/base/store/scoreboard.h"
#include "ui/plots/phase_bars.h"
#include "ui/plots/speedup_waterfall.h"

namespace tokamak::ui {

// One bar per run, in the order compared; with more than three runs labelled by run id only ("#3"), since
// full names overlap under the bars in the half-width pane and the scoreboard beside them spells them out.
std::vector<PhaseBars::Run> profileBars(const tokamak::Scoreboard& board);
// One rung per run, or per group of runs (a ladder run with several seeds) at the group's mean where its
// first run stands; a rung's rate is tok/s, or with `byTimeToTarget` 1 / time to the target val loss.
std::vector<SpeedupWaterfall::Rung> waterfallRungs(const tokamak::Scoreboard& board, bool byTimeToTarget);

}  // namespace tokamak::ui
