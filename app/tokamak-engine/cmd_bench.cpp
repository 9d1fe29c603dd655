// `tokamak bench --ladder FILE`: runs every rung of a ladder for a warm-up and then timed steps, records each
// rung as a run in the store, and prints the scoreboard: rung, tok/s, speedup over rung 1, MFU, peak memory,
// loss after the timed steps. A ladder whose rungs have a eval.target_val_loss (a speedrun ladder) trains each
// rung for its own train.steps (unless --steps is given) and adds the training time and steps to that target,
// "not reached" with the best val loss otherwise. --seeds N runs every rung N times (train.seed, +1, ...;
// named RUNG-sSEED, so `runs compare --group seed` groups them) and gives means ± sample std. --rungs "1,8-16"
// runs those rungs alone; a cumulative ladder's skipped rungs still set their keys in the rungs after them. A stop
// signal (Ctrl-C, SIGTERM, SIGHUP) ends the rung as `train` ends a run ("stopped") and the ladder with it.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/tokamak-engine/cli_checks.h"
#include "app/cli/commands.h"
#include "app/tokamak-engine/kernel_profile.h"
#include "app/tokamak-engine/signals.h"
#include "engine/base/run/events.h"
#include "engine/base/config/ladder.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/store_sink.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/train/torch_error.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/format.h"

namespace tokamak::cli {
namespace {

struct BenchArgs {
  std::string ladder, db, rungs;
  std::vector<std::string> sets;
  int64_t steps = 20, warmup = 5, seeds = 1;
  std::string kernels_given;  // --kernels N as typed (kernels_to_list)
  int kernels = 0;            // the N costliest kernels of each rung's timed steps (0: no profiler)
  bool no_store = false;
  bool steps_given = false;  // --steps on the command line: it overrides a speedrun ladder's train.steps
};

// Collects what the scoreboard needs from a rung's run.
struct RungRecorder : EventSink {
  int64_t warmup = 0;
  double timed_tokens = 0, timed_seconds = 0, mfu_sum = 0, peak = 0, loss = NAN;
  int64_t timed_steps = 0;
  std::vector<double> timed_ms;  // each timed step's time, for its median and spread
  double best_val = NAN, time_to_target = NAN, steps_to_target = NAN;
  std::string status, error;
  bool interrupted = false;  // Ctrl-C, SIGTERM or SIGHUP during the rung: it ended "stopped", the ladder ends too
  void on_eval(const EvalEvent& e) override {
    if (e.metrics.has("val_loss") && !(e.metric("val_loss") >= best_val)) best_val = e.metric("val_loss");
    if (e.metrics.has("time_to_target_s"))
      time_to_target = e.metric("time_to_target_s"), steps_to_target = e.metric("steps_to_target");
  }
  void on_step(const StepEvent& e) override {
    const double step_ms = e.metric("step_ms");
    if (e.step > warmup) {
      timed_tokens += e.metric("tok_s") * step_ms / 1000.0;  // log_every = 1: one step per report
      timed_seconds += step_ms / 1000.0;
      if (e.metrics.has("mfu")) mfu_sum += e.metric("mfu");
      ++timed_steps;
      timed_ms.push_back(step_ms);
    }
    if (e.metrics.has("mem_peak")) peak = std::max(peak, e.metric("mem_peak"));
    if (e.metrics.has("loss")) loss = e.metric("loss");
  }
  void on_end(const EndEvent& e) override { status = e.status, error = e.error; }
};

std::string format_fixed(double v, const char* fmt) {
  if (!std::isfinite(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Mean and sample std of the finite values; n is how many there were.
struct Spread {
  double mean = NAN, std = NAN;
  int n = 0;
};
Spread spread(const std::vector<double>& values) {
  Spread s;
  double sum = 0;
  for (double v : values)
    if (std::isfinite(v)) sum += v, ++s.n;
  if (s.n == 0) return s;
  s.mean = sum / s.n;
  double sq = 0;
  for (double v : values)
    if (std::isfinite(v)) sq += (v - s.mean) * (v - s.mean);
  s.std = s.n > 1 ? std::sqrt(sq / (s.n - 1)) : 0;
  return s;
}

// The Q-quantile (0..1) of VALUES, linear between the two nearest ranks; VALUES is not empty.
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  return lo + 1 < values.size() ? values[lo] + (at - lo) * (values[lo + 1] - values[lo]) : values[lo];
}

// One training of a rung (one seed); returns what the scoreboard needs.
RungRecorder run_rung(Config c, const BenchArgs& a) {
  RungRecorder rec;
  rec.warmup = a.warmup;
  FanOutSink sinks;
  sinks.add(&rec);
  // The timed steps, all of them: the warm-up's are skipped.
  std::unique_ptr<KernelProfile> kernels;
  if (a.kernels > 0)
    kernels = std::make_unique<KernelProfile>(a.kernels, parse_device(c.device).is_cuda(), a.warmup),
    sinks.add(kernels.get());
  std::unique_ptr<StoreSink> store;
  try {
    if (kernels) refuse_unprofilable(c);  // the config itself is checked once, by train()
    if (!a.no_store) store = std::make_unique<StoreSink>(a.db), sinks.add(store.get());
    // Each rung's peak is its own: without a reset, a rung reports the largest peak of any rung before it.
    reset_peak_memory(parse_device(c.device));
    TrainControl control;
    control.checkpoints = false;                 // a rung is measured, not kept
    const StopOnSignals signals(&control.stop);  // as `train`: the step ends, the run is "stopped", not lost
    train(c, sinks, &control);
    rec.interrupted = control.stop.load();
  } catch (const std::exception& e) {
    rec.status = "failed", rec.error = torch_error_text(e);
  }
  if (kernels) {
    const KernelProfile::Result profile = kernels->finish(c);  // also ends a profile that a failure left open
    if (rec.status != "failed" || !profile.record.kinds.empty()) std::fputs(profile.text.c_str(), stdout);
    std::fflush(stdout);
    store_profile(store, profile.record);
  }
  if (rec.status != "finished") std::fprintf(stderr, "  %s: %s\n", rec.status.c_str(), rec.error.c_str());
  // The mean tok/s of the table hides a slow step or a drifting clock; the median and the middle 80% do not.
  if (!rec.timed_ms.empty())
    std::fprintf(stderr, "  step times: median %.2f ms, 10-90%% %.2f-%.2f ms, %zu timed steps\n",
                 quantile(rec.timed_ms, 0.5), quantile(rec.timed_ms, 0.1), quantile(rec.timed_ms, 0.9),
                 rec.timed_ms.size());
  return rec;
}

// --rungs "1,3-5" (1-based, as the scoreboard numbers them) → the indices to run, in the ladder's order.
std::vector<size_t> chosen_rungs(const std::string& list, size_t count) {
  std::vector<bool> on(count, list.empty());
  const auto bad = [&](const std::string& why) {
    return Error("--rungs " + list + ": " + why,
                 "give rung numbers from 1 to " + std::to_string(count) + " and ranges, as in --rungs 1,3-5");
  };
  size_t at = 0;
  while (at < list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    at = comma + 1;
    const size_t dash = item.find('-');
    size_t first = 0, last = 0;
    try {
      size_t used = 0;
      first = std::stoul(item.substr(0, dash), &used);
      if (used != (dash == std::string::npos ? item.size() : dash)) throw std::invalid_argument(item);
      last = dash == std::string::npos ? first : std::stoul(item.substr(dash + 1), &used);
      if (dash != std::string::npos && used != item.size() - dash - 1) throw std::invalid_argument(item);
    } catch (const std::logic_error&) {
      throw bad("'" + item + "' is not a rung number or a range");
    }
    if (first > last) throw bad("'" + item + "' runs backwards");
    if (first < 1 || last > count)
      throw bad("'" + item + "' is outside the ladder's " + std::to_string(count) + " rungs");
    for (size_t i = first; i <= last; ++i) on[i - 1] = true;
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < count; ++i)
    if (on[i]) out.push_back(i);
  return out;
}

void run_bench(const BenchArgs& a) {
  Ladder ladder = load_ladder(a.ladder, a.sets);
  const std::vector<size_t> chosen = chosen_rungs(a.rungs, ladder.rungs.size());
  bool target = false;
  for (const LadderRung& r : ladder.rungs) target = target || r.config.eval.target_val_loss > 0;
  // A speedrun ladder's rungs train to their own train.steps (or their target) unless --steps is given.
  const std::string length = target && !a.steps_given ? "each to its target or its own train.steps"
                                                      : std::to_string(a.warmup) + " warm-up + " +
                                                            std::to_string(a.steps) + " timed steps each";
  std::fprintf(stderr, "ladder %s: %zu rungs × %lld seed%s, %s\n%s\n", ladder.name.c_str(), chosen.size(),
               static_cast<long long>(a.seeds), a.seeds == 1 ? "" : "s", length.c_str(), ladder.description.c_str());
  std::unique_ptr<StoreSink> probe;
  if (!a.no_store) probe = std::make_unique<StoreSink>(a.db);  // a bad --db fails before the first rung
  std::vector<std::vector<std::string>> table = {{"#", "rung", "tok/s", "speedup", "MFU", "peak mem", "loss"}};
  if (a.seeds > 1) table[0].insert(table[0].begin() + 3, "± std");
  if (target)
    table[0].insert(table[0].end(), {"time to target", "± std", "steps to target", "reached", "time speedup"});
  double baseline = NAN, baseline_time = NAN;
  bool stopped = false;  // a stop signal during a rung
  for (const size_t i : chosen) {
    LadderRung& rung = ladder.rungs[i];
    Config& c = rung.config;
    // A speedrun rung trains to its own steps (and stops at its target if it says so); others are timed.
    if (!(c.eval.target_val_loss > 0) || a.steps_given) c.train.steps = a.warmup + a.steps;
    c.train.log_every = 1;
    c.checkpoint.every = 0;
    std::vector<double> tok_s, mfu, peak, loss, time, steps, best;
    bool finished = true;
    for (int64_t k = 0; k < a.seeds; ++k) {
      Config run = c;
      run.train.seed = c.train.seed + k;
      run.name = ladder.name + "/" + rung.name + (a.seeds > 1 ? "-s" + std::to_string(run.train.seed) : "");
      std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, ladder.rungs.size(), run.name.c_str());
      const RungRecorder rec = run_rung(run, a);
      finished = finished && rec.status == "finished";
      tok_s.push_back(rec.timed_seconds > 0 ? rec.timed_tokens / rec.timed_seconds : NAN);
      mfu.push_back(rec.timed_steps && rec.mfu_sum > 0 ? rec.mfu_sum / rec.timed_steps : NAN);
      peak.push_back(rec.peak > 0 ? rec.peak : NAN);
      loss.push_back(rec.loss), best.push_back(rec.best_val);
      time.push_back(rec.time_to_target), steps.push_back(rec.steps_to_target);
      if ((stopped = rec.interrupted)) break;
    }
    const Spread rate = spread(tok_s), t = spread(time), st = spread(steps);
    if (i == chosen.front()) baseline = rate.mean, baseline_time = t.mean;  // speedups: over the first rung run
    std::vector<std::string> row = {std::to_string(i + 1),
                                    rung.name,
                                    finished  ? format_count(rate.mean)
                                    : stopped ? "stopped"
                                              : "failed",
                                    format_fixed(rate.mean / baseline, "%.2fx"),
                                    format_fixed(100 * spread(mfu).mean, "%.1f%%"),
                                    std::isfinite(spread(peak).mean) ? format_bytes(spread(peak).mean) : "-",
                                    format_fixed(spread(loss).mean, "%.4f")};
    if (a.seeds > 1) row.insert(row.begin() + 3, format_count(rate.std));
    if (target)
      row.insert(
          row.end(),
          {t.n ? format_fixed(t.mean, "%.1f s") : "not reached (best " + format_fixed(spread(best).mean, "%.4f") + ")",
           format_fixed(t.std, "%.1f s"), format_fixed(st.mean, "%.0f"),
           std::to_string(t.n) + "/" + std::to_string(a.seeds), format_fixed(baseline_time / t.mean, "%.2fx")});
    table.push_back(row);
    if (stopped) {
      std::fputs(format_text_table(table).c_str(), stdout);
      throw Error("the ladder was stopped during rung " + std::to_string(i + 1) + " ('" + rung.name + "')",
                  "the rungs before it are in the table above; `--rungs " + std::to_string(i + 1) + "-" +
                      std::to_string(ladder.rungs.size()) + "` runs the rest");
    }
  }
  std::fputs(format_text_table(table).c_str(), stdout);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "run a ladder of speed-ups and print its scoreboard");
  cmd->add_option("--ladder", a->ladder, "ladder JSON (see resources/ladders/)")->required();
  cmd->add_option("--steps", a->steps, "timed steps per rung (a speedrun ladder's rungs: their own train.steps)")
      ->check(above_zero());
  cmd->add_option("--seeds", a->seeds, "runs per rung, seeds train.seed, +1, ... (means ± std)")
      ->check(above_zero());
  cmd->add_option("--warmup", a->warmup, "untimed steps before them")->check(zero_or_more());
  cmd->add_option("--set", a->sets, "override a config key in every rung (repeatable)");
  cmd->add_option("--rungs", a->rungs,
                  "run only these rungs, e.g. 1,8-16 (a cumulative ladder's skipped rungs still set their keys in "
                  "the rungs after them; speedups are over the first rung run)");
  cmd->add_option("--db", a->db, "run store (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_flag("--no-store", a->no_store, "do not record the rungs as runs");
  cmd->add_option("--kernels", a->kernels_given,
                  "after each rung, its N costliest kernels (CUDA) or operators (CPU) over the timed steps, from "
                  "LibTorch's profiler (profiled rungs run a little slower)")
      ->type_name("N");
  cmd->callback([a, cmd] {
    a->steps_given = cmd->count("--steps") > 0;
    a->kernels = kernels_to_list(a->kernels_given, cmd->count("--kernels") > 0);
    run_bench(*a);
  });
}

}  // namespace tokamak::cli
