// A run's pace, watched: SlowdownWatch (in the trainer, at report steps) says when tok/s has fallen well below the
// run's own median and what changed on the machine meanwhile (engine/base/run/machine_health.h); StallWatch (in
// whoever follows the run's journal) says when no step has come for far longer than the run's steps take. No
// LibTorch, no clock of their own: they are given the metrics and the times.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "engine/base/run/metrics.h"

namespace tokamak {

class SlowdownWatch {
 public:
  // fraction 0: never.
  SlowdownWatch(double fraction, int64_t reports) : fraction_(fraction), reports_(reports) {}
  // A report's metrics (tok_s and the machine's health values). Returns the slowdown's message once, when tok_s has
  // been below fraction × the median of the earlier reports for `reports` reports in a row; again only after a
  // report at the usual pace.
  std::optional<std::string> report(const Metrics& m);

 private:
  double fraction_;
  int64_t reports_;
  std::deque<double> speeds_;  // the last reports at the usual pace
  Metrics usual_;              // the last of them: what the machine looked like then
  int64_t slow_in_a_row_ = 0;
  bool said_ = false;
};

// NVML's clock event reasons that hold a GPU below its clocks (a power cap, thermal or hardware slowdown, the power
// brake), and those bits in words.
uint64_t gpu_slowdown_bits(uint64_t reasons);
std::string gpu_slowdown_names(uint64_t bits);
// What changed between two reports' health values, in words ("other processes use 1.9 cores (0.1 before)"; "" when
// nothing this run measures moved).
std::string what_changed(const Metrics& before, const Metrics& now);

class StallWatch {
 public:
  // factor 0: never stalled.
  StallWatch(double factor, double min_s) : factor_(factor), min_s_(min_s) {}
  // A step report: its step, the run's own clock (its wall_s) and when it arrived here.
  void step(int64_t step, double wall_s, double now);
  // Any other sign of life (an evaluation, a sample, a checkpoint): the silence starts again.
  void activity(double now) { last_ = now; }
  // The limit on silence: factor × the median time between the run's reports, at least min_s; -1 before two
  // reports.
  double limit() const;
  // Seconds without a step, when past the limit (nothing otherwise).
  std::optional<double> stalled(double now) const;
  int64_t last_step() const { return last_step_; }

 private:
  double factor_, min_s_;
  std::deque<double> gaps_;  // seconds between the last reports, by the run's clock
  double last_wall_ = -1, last_ = -1;
  int64_t last_step_ = 0;
};

// A journal's reader that says when its run stalls: fed each journal line as it is read and asked while nothing
// comes, it returns the event lines to add to what it prints ({"event": "stalled", …} once a stall passes the limit,
// {"event": "stall_over", …} at the next step). The limit comes from the run's own health.* keys (its start line).
class JournalStallWatch {
 public:
  std::optional<std::string> line(const std::string& journal_line, double now);
  // Nothing came. PAUSED says whether the run is paused (no steps is then what it was asked for); it is asked
  // only when the silence has passed the limit.
  std::optional<std::string> idle(double now, const std::function<bool()>& paused);
  int64_t last_step() const { return watch_.last_step(); }

 private:
  StallWatch watch_{10, 60};
  bool stalled_ = false;
  double since_ = 0;  // when the stall was said
};

}  // namespace tokamak
