// The plan of a run about to train, for the device it trains on: `tokamak plan`'s tok/s and step time as metrics
// of its first report (plan_tok_s, plan_step_ms), so the store keeps the prediction beside what the run measured
// and the studio's Plan view can show how far to trust it.
#pragma once
#include <string>

#include "engine/base/run/metrics.h"
#include "engine/base/config/config.h"

namespace tokamak {

// Empty when the device is in no catalog (an unknown GPU) or the catalog cannot be read (WHY_NOT says so).
// DB: the store whose profiled runs the rates come from ("" for none). WORLD: the run's data-parallel size.
Metrics run_prediction(const Config& resolved, int world, const std::string& db, std::string* why_not);

}  // namespace tokamak
