// Sweeps: a file (resources/sweeps/*.json, docs/SWEEPS.md) that names a base config, the keys to sweep and
// how, the seeds, the metric to rank by and early stopping, expanded here into one validated config per
// trial. Nothing is queued from a plan with a problem: every point is checked (the key exists, the value is
// one its validator accepts) before plan_sweep returns. LibTorch-free, like the rest of engine/base.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/asha.h"

namespace tokamak {

// What ranks the trials. Every metric is a loss or a time: lower is better unless direction says max.
struct SweepMetric {
  std::string name = "final_val_loss";  // final_val_loss | best_val_loss | time_to_target
  bool maximize = false;
};

struct SweepTrial {
  int64_t point = 0;    // 0-based index of the trial in the plan
  std::string name;     // "NAME-p3-lr=0.000464-optimizer=muon-seed=1": the run's name
  std::string summary;  // "optimizer.lr=0.000464 optimizer.name=muon train.seed=1"
  Config config;        // validated
};

struct SweepPlan {
  std::string name;
  std::string method;             // grid | random
  std::vector<std::string> keys;  // the swept keys, in the file's order (train.seed last when seeds are given)
  SweepMetric metric;
  AshaSpec asha;  // min_steps 0 = every trial trains to the end
  std::vector<SweepTrial> trials;
  std::string spec_json;  // the file as read, kept with the sweep in the store
};

// Reads a sweep file's text. source names the file in errors. cuda_devices as for config_problems(). Throws a
// one-line Error naming the key, the value and the point for the first problem.
SweepPlan plan_sweep(const std::string& text, const std::string& source, int cuda_devices);

// A swept key's short label, in trial names and the studio's plots: its last part ("lr"), or its section where the
// last part says only "name" (optimizer.name → "optimizer").
std::string swept_key_label(const std::string& key);

// A trial's result from the journal lines of its run up to and including `step` (0 = all): the metric as
// named (the last val_loss, the lowest, or time_to_target_s: +inf while the target is not reached), NaN when
// nothing was evaluated or the last val loss is not finite (diverged); and the last val loss.
struct TrialResult {
  double metric = 0, val_loss = 0;
};
TrialResult trial_metric(const SweepMetric& metric, const std::string& journal, int64_t step);

// Spearman's rank correlation of x and y (ties get their average rank): how much a swept key matters to the
// metric, for the sweep's "which key matters most". NaN with fewer than 3 pairs or when one side is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace tokamak
