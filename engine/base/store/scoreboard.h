// The scoreboard of `tokamak runs compare` and the Markdown export: one row per run (tok/s, speedup over a
// baseline run, MFU, peak memory, final and best val loss) and the config keys in which the runs differ.
// The arithmetic works on plain inputs so that it can be checked without a database.
//
// tok/s of a run is the median of its logged tok_s values after leaving out the first 10% of them (at least
// one when there are two or more): the first reports include start-up (allocator warm-up, autotuning, data
// prefetch fill), and the median ignores the odd slow step (an eval, a checkpoint) that a mean would not.
// MFU is taken the same way. Speedup is tok/s divided by the baseline run's tok/s.
// The step profile (ms per step by phase, engine/base/run/phases.h) is the mean over the run's reports after
// the first (the first step holds the warm-up), beside step_ms taken the same way: a table of its own.
// Time to a target loss (eval.target_val_loss): when any run has a target, the table adds the training time
// and steps at which its val loss first reached it ("not reached" otherwise: its best loss is beside it), and
// that time's speed-up over the baseline's (baseline time / time).
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/run/phases.h"
#include "engine/base/store/run_groups.h"
#include "engine/base/store/verdict.h"

namespace tokamak {

class RunStore;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ScoreInput {
  std::string label;                                      // "#3 baseline"
  std::string setup;                                      // "gpt2 cuda:0 ×8"
  std::vector<double> tok_s;                              // logged values in step order
  std::vector<double> mfu;                                // logged values in step order, fractions of peak
  std::vector<double> step_ms;                            // logged values in step order
  std::array<std::vector<double>, kPhaseCount> phase_ms;  // logged values in step order, by Phase
  double peak_mem = kNaN;                                 // bytes
  double final_val_loss = kNaN, best_val_loss = kNaN;
  double target = kNaN;                                                             // eval.target_val_loss when > 0
  double time_to_target_s = kNaN, tokens_to_target = kNaN, steps_to_target = kNaN;  // NaN: not reached
  std::string config_json;
};

struct ScoreRow {
  std::string label, setup;
  double tok_s = kNaN, speedup = kNaN, mfu = kNaN, peak_mem = kNaN, final_val_loss = kNaN, best_val_loss = kNaN;
  double step_ms = kNaN;  // mean over the reports after the first, like the phases
  double target = kNaN, time_to_target_s = kNaN, tokens_to_target = kNaN, steps_to_target = kNaN;
  double target_speedup = kNaN;  // baseline's time_to_target_s / this run's
  static_assert(kPhaseCount == 7, "one kNaN per phase below");
  std::array<double, kPhaseCount> phase_ms = {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};  // NaN: not reported
};

// A group of runs (run_groups.h) as one row: its runs' means, and how far their tok/s spread.
struct ScoreGroup {
  std::string label;            // "flash ×3"
  std::vector<size_t> members;  // indices into Scoreboard::rows
  ScoreRow mean;                // tok/s, speedup, MFU, val losses, step and phase ms: means; peak memory: max
  double tok_s_std = kNaN, tok_s_min = kNaN, tok_s_max = kNaN;
  // Time to target over the members that reached it (the mean's time_to_target_s is their mean).
  int reached = 0;
  double time_to_target_std = kNaN, time_to_target_min = kNaN, time_to_target_max = kNaN;
  // Against the group that holds the baseline run (verdict.h: Welch's t-test, other minus baseline): tok/s, the
  // final val loss, the time to target over the runs that reached it. None for the baseline's own group, without
  // one, or where a side has fewer than two values.
  bool holds_baseline = false;
  // Each verdict counts every run of both groups ("n used of n"): a failed run is missing, one that never
  // reached the target is censored; either keeps it from being resolved.
  std::optional<Verdict> tok_s_verdict, val_loss_verdict, target_verdict;
  // Why this group has no verdict at all ("" when it has them, or holds the baseline): the baseline's group has one
  // run, so nothing can be tested against it.
  std::string no_verdict;
  int complete = 0;  // members with a tok/s and (where any run of the board evaluated) a final val loss: a failed or
                     // diverged run lacks them
};

struct Scoreboard {
  std::vector<ScoreRow> rows;
  std::vector<ScoreGroup> groups;  // empty unless add_group_rows() was called
  // The groups of one run, which get no row and no verdict (a group needs 2 runs or more): each is said, so a
  // run that stands alone is not silently missing from the groups.
  struct SingleGroup {
    std::string label;  // "D ×1"
    size_t member = 0;  // index into rows
  };
  std::vector<SingleGroup> single_groups;
  size_t baseline = 0;
  std::vector<std::string> diff_keys;                 // dotted config keys whose values differ
  std::vector<std::vector<std::string>> diff_values;  // [key][run], "-" where a run lacks the key
};

// Median of values after the warm-up share described above; NaN when there is none.
double steady_value(const std::vector<double>& values);
// Mean of the values after the first (of the only one when there is one); NaN when there is none.
double mean_after_first(const std::vector<double>& values);
// Which way a metric improves, from its name: -1 lower is better (…loss…, …_ms, mem_…, skipped_steps), +1
// higher is better (tok_s, mfu), 0 neither (lr, grad_norm, a metric this list does not know).
int metric_better(const std::string& key);
// A summary of a metric's values (in step order) other than the last: "last", "min", "max", "best" (min or
// max as metric_better says; NaN when neither is better) or "mean:K" (the mean of the last K values).
// check_metric_stat throws a one-line Error naming a stat that is none of these.
double summarize_metric(const std::string& key, const std::vector<double>& values, const std::string& stat);
void check_metric_stat(const std::string& stat);
std::string metric_stat_label(const std::string& stat);  // "last", "mean of last 10"
// Whether any row has a step profile (the phase table is printed only then).
bool has_phases(const Scoreboard& board);
// Whether any row has a target loss (the time-to-target columns are printed only then).
bool has_target(const Scoreboard& board);
// "12.3 s", "4.2 min"; "not reached" when the row had a target and did not reach it; "-" without a target.
std::string format_time_to_target(double seconds, double target);
// {"a":{"b":1}} -> {"a.b": "1"}; strings unquoted, arrays as JSON. Empty or invalid JSON -> {}.
std::map<std::string, std::string> flatten_config(const std::string& config_json);
Scoreboard build_scoreboard(const std::vector<ScoreInput>& runs, size_t baseline);
// The run's scoreboard input, read from the store (one pass over its metrics).
ScoreInput score_input(RunStore& store, int64_t run_id);

std::string format_scoreboard_text(const Scoreboard& board);
std::string format_scoreboard_markdown(const Scoreboard& board);
// Columns padded to line up (UTF-8 aware), two spaces apart; the first row is the header.
std::string format_text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace tokamak
