// Asynchronous successive halving (ASHA, Li et al. 2018, "A System for Massively Parallel Hyperparameter
// Tuning"): rungs at steps r, rη, rη², … below the run's train.steps; a trial that reaches a rung goes on only
// while it is in the top 1/η of the trials that have reached that rung. Decisions only, no processes: the queue
// worker (engine/fleet/queue/queue_worker.h) stops a trial at its rung and resumes a promoted one from its checkpoint.
#pragma once
#include <cstdint>
#include <vector>

namespace tokamak {

struct AshaSpec {
  int64_t min_steps = 0;  // r: the first rung; 0 = no early stopping
  int64_t eta = 3;        // η: keep the top 1/η at each rung, rungs η times apart
};

// The rung steps r, rη, rη², … that lie strictly below steps (the end is the last "rung", reached by training
// to train.steps).
std::vector<int64_t> asha_rungs(const AshaSpec& spec, int64_t steps);

// A trial's result at one rung: its metric there, oriented so that lower is better (NaN = diverged or failed:
// the worst, never promoted; +inf = a target not reached yet), the val loss that orders equal metrics, and
// whether it was promoted from this rung already.
struct RungResult {
  int64_t trial = 0;
  double metric = 0;
  double tie = 0;
  bool promoted = false;
};

// The trials to promote from one rung now: those among the best floor(n/η) of the n results (equal metrics by
// val loss, then by trial, so the choice is repeatable) that have not been promoted yet and are not NaN.
std::vector<int64_t> asha_promotions(const std::vector<RungResult>& rung, int64_t eta);

}  // namespace tokamak
