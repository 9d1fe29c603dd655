// Which swept key matters most to a sweep's metric: Spearman's rank correlation between each numeric swept
// key's value and the metric at the first rung (the one step every trial reached, so early-stopped trials
// count as much as the rest; the end when there is no early stopping). `tokamak sweep status --json` and the
// studio's sweep view both show it, so both read it from here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fleet/queue/sweep_store.h"

namespace tokamak {

struct KeyImportance {
  std::string key;
  std::string measure = "spearman";
  double rho = 0;  // NaN: a choice (optimizer.name has no order to correlate with), or too few trials
  int64_t n = 0;   // the trials with a finite metric at the first rung that it was computed over
};

// The swept keys of a sweep file, in its order; train.seed last when the file gives "seeds".
std::vector<std::string> swept_keys(const std::string& spec_json);

// One row per swept key, strongest |rho| first (NaN last, in the file's order).
std::vector<KeyImportance> sweep_importance(const SweepStatus& status);

}  // namespace tokamak
