// `tokamak bench --ladder FILE`: runs every rung of a ladder for a warm-up and then timed steps, records each
// rung as a run in the store, and prints the scoreboard: rung, tok/s, speedup over rung 1, MFU, peak memory,
// loss after the timed steps.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>

#include "app/tokamak/commands.h"
#include "engine/config/ladder.h"
#include "engine/store/scoreboard.h"
#include "engine/store/store_sink.h"
#include "engine/train/device.h"
#include "engine/train/torch_error.h"
#include "engine/train/trainer.h"
#include "engine/util/error.h"

namespace tokamak::cli {
namespace {

struct BenchArgs {
  std::string ladder, db;
  std::vector<std::string> sets;
  int64_t steps = 20, warmup = 5;
  bool no_store = false;
};

// Collects what the scoreboard needs from a rung's run.
struct RungRecorder : EventSink {
  int64_t warmup = 0;
  double timed_tokens = 0, timed_seconds = 0, mfu_sum = 0, peak = 0, loss = NAN;
  int64_t timed_steps = 0;
  std::string status, error;
  void on_step(const StepEvent& e) override {
    const double step_ms = e.metric("step_ms");
    if (e.step > warmup) {
      timed_tokens += e.metric("tok_s") * step_ms / 1000.0;  // log_every = 1: one step per report
      timed_seconds += step_ms / 1000.0;
      if (e.metrics.has("mfu")) mfu_sum += e.metric("mfu");
      ++timed_steps;
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

void run_bench(const BenchArgs& a) {
  Ladder ladder = load_ladder(a.ladder, a.sets);
  std::fprintf(stderr, "ladder %s: %zu rungs, %lld warm-up + %lld timed steps each\n%s\n", ladder.name.c_str(),
               ladder.rungs.size(), static_cast<long long>(a.warmup), static_cast<long long>(a.steps),
               ladder.description.c_str());
  std::unique_ptr<StoreSink> probe;
  if (!a.no_store) probe = std::make_unique<StoreSink>(a.db);  // a bad --db fails before the first rung
  std::vector<std::vector<std::string>> table = {{"#", "rung", "tok/s", "speedup", "MFU", "peak mem", "loss"}};
  double baseline = NAN;
  for (size_t i = 0; i < ladder.rungs.size(); ++i) {
    LadderRung& rung = ladder.rungs[i];
    Config& c = rung.config;
    c.train.steps = a.warmup + a.steps;
    c.train.log_every = 1;
    c.train.checkpoint_every = 0;
    c.name = ladder.name + "/" + rung.name;
    std::fprintf(stderr, "[%zu/%zu] %s\n", i + 1, ladder.rungs.size(), rung.name.c_str());
    RungRecorder rec;
    rec.warmup = a.warmup;
    FanOutSink sinks;
    sinks.add(&rec);
    std::unique_ptr<StoreSink> store;
    try {
      validate_config(c, cuda_device_count());
      if (!a.no_store) store = std::make_unique<StoreSink>(a.db), sinks.add(store.get());
      // Each rung's peak is its own: without a reset, a rung reports the largest peak of any rung before it.
      reset_peak_memory(parse_device(c.device));
      train(c, sinks);
    } catch (const std::exception& e) {
      rec.status = "failed", rec.error = torch_error_text(e);
    }
    const double tok_s = rec.timed_seconds > 0 ? rec.timed_tokens / rec.timed_seconds : NAN;
    if (i == 0) baseline = tok_s;
    if (rec.status != "finished") std::fprintf(stderr, "  %s: %s\n", rec.status.c_str(), rec.error.c_str());
    table.push_back(
        {std::to_string(i + 1), rung.name, rec.status == "finished" ? format_rate(tok_s) : rec.status,
         format_fixed(tok_s / baseline, "%.2fx"),
         rec.timed_steps && rec.mfu_sum > 0 ? format_fixed(100 * rec.mfu_sum / rec.timed_steps, "%.1f%%") : "-",
         rec.peak > 0 ? format_bytes(rec.peak) : "-", format_fixed(rec.loss, "%.4f")});
  }
  std::fputs(format_text_table(table).c_str(), stdout);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "run a ladder of speed-ups and print its scoreboard");
  cmd->add_option("--ladder", a->ladder, "ladder JSON (see experiments/ladders/)")->required();
  cmd->add_option("--steps", a->steps, "timed steps per rung")->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", a->warmup, "untimed steps before them")->check(CLI::NonNegativeNumber);
  cmd->add_option("--set", a->sets, "override a config key in every rung (repeatable)");
  cmd->add_option("--db", a->db, "run store (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_flag("--no-store", a->no_store, "do not record the rungs as runs");
  cmd->callback([a] { run_bench(*a); });
}

}  // namespace tokamak::cli
