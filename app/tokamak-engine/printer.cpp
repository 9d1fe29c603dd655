// PrinterSink (see printer.h).
#include "app/tokamak-engine/printer.h"

#include "engine/base/run/layer_metrics.h"
#include "engine/base/run/phases.h"

#include "engine/base/run/journal.h"
#include "engine/base/run/journal_events.h"
#include "engine/base/util/format.h"
#include "engine/base/perf/speed_of_light.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <string>

namespace tokamak::cli {
namespace {

using json = nlohmann::json;

}  // namespace

void PrinterSink::emit(const json& j) {
  // error_handler::replace: a string from outside (a prompt, a file name in a warning) may hold invalid UTF-8;
  // samples no longer do (sample_text holds back a character split between tokens).
  const std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  // The journal first: it is the record that outlives every reader (engine/base/run/README.md).
  // Said once, whether the line was refused or went into the reserve a full disk leaves (journal.h).
  if (journal_ && !journal_->failed()) {
    const bool written = journal_->append(line);
    if ((!written || journal_->disk_full()) && !journal_failure_said_ && on_journal_failure_) {
      journal_failure_said_ = true;
      on_journal_failure_(journal_->error());
    }
  }
  // The reader of stdout went away (`| head`, a crashed studio): SIGPIPE is ignored (signals.h), so the write
  // fails with EPIPE; say so once and go on training without printing.
  if (!json_ || stdout_closed_) return;
  if ((std::fprintf(stdout, "%s\n", line.c_str()) < 0 || std::fflush(stdout) != 0) && errno == EPIPE) {
    stdout_closed_ = true;
    std::fprintf(stderr,
                 "tokamak: stdout was closed; JSON events are no longer written there, the run goes on and is "
                 "recorded\n");
  }
}

void PrinterSink::on_start(const RunStart& e) {
  total_steps_ = e.total_steps;
  std::string ranks = e.world_size > 1 ? " ×" + std::to_string(e.world_size) + " ranks" : "";
  std::fprintf(stderr, "run %s (%s): %s, %s parameters, on %s%s%s\n", e.name.c_str(), e.run_uid.c_str(),
               e.model.c_str(), format_count(static_cast<double>(e.n_params)).c_str(), e.device.c_str(), ranks.c_str(),
               e.gpu_name.empty() ? "" : (" (" + e.gpu_name + ")").c_str());
  std::fprintf(stderr, "data: %s\n", e.dataset.c_str());
  std::fputs(machine_limits_lines(e.peak_flops, e.peak_source, e.memory_bytes_per_s, e.memory_source).c_str(), stderr);
  if (e.start_step > 0) std::fprintf(stderr, "resuming at step %lld\n", static_cast<long long>(e.start_step));
  if (wants_json()) emit(event_json(e));
}

// The machine's readings (engine/base/run/machine_health.h) go to the journal, the store and the studio's plots;
// a terminal line would be twice as long with them.
static bool is_machine_health(const std::string& k) {
  for (const char* h : {"cpu_mhz", "cpu_temp_c", "load_1m", "others_cores", "swap_used"})
    if (k == h) return true;
  return k.rfind("gpu_", 0) == 0;
}

// The step profile's phases as one group, "ms: data 0.07 · forward 1.68 · head 9.21 · …" (the studio and `runs
// compare` show them per run; seven raw keys made a terminal line three times as long).
static std::string phase_group(const Metrics& m) {
  std::string group;
  char buf[32];
  for (const PhaseName& p : phase_names())
    for (const MetricValue& v : m)
      if (v.key == p.metric) {
        std::snprintf(buf, sizeof buf, "%.2f", v.value);
        group += std::string(group.empty() ? " | ms: " : " · ") + p.label + " " + buf;
      }
  return group;
}

static bool is_phase(const std::string& k) { return k.rfind("phase_", 0) == 0; }

// "name value" for the metrics a person reads at a glance, in this order; any others follow as key=value.
static std::string human_metrics(const Metrics& m) {
  std::string line;
  char buf[64];
  auto put = [&](const char* label, const char* fmt, double v) {
    std::snprintf(buf, sizeof buf, fmt, v);
    line += std::string(" | ") + label + buf;
  };
  for (const MetricValue& v : m) {
    const std::string& k = v.key;
    if (k == "loss") put("loss ", "%.4f", v.value);
    else if (k == "val_loss") put("val loss ", "%.4f", v.value);
    else if (k == "lr") put("lr ", "%.2e", v.value);
    else if (k == "grad_norm") put("norm ", "%.3f", v.value);
    else if (k == "step_ms") put("", "%.1f ms", v.value);
    else if (k == "tok_s") line += " | " + format_count(v.value) + " tok/s";
    else if (k == "mfu") put("mfu ", "%.1f%%", 100 * v.value);
    else if (k == "mem_peak") put("mem ", "%.0f MB", v.value / 1e6);
    else if (k == "eta_s") line += " | " + format_duration(v.value) + " left";
    else if (k == "plan_tok_s") line += " | planned " + format_count(v.value) + " tok/s";  // the first report's
    else if (k == "plan_step_ms") put("planned ", "%.1f ms", v.value);
    else if (k == "mem_allocated" || k == "mem_reserved" || (k == "skipped_steps" && v.value == 0) ||
             (k == "spikes" && v.value == 0) || is_machine_health(k) || is_phase(k) || is_layer_metric(k) ||
             k == "layers_ms")
      continue;
    else put((k + " ").c_str(), "%g", v.value);
  }
  return line + phase_group(m);
}

void PrinterSink::on_step(const StepEvent& e) {
  std::fprintf(stderr, "step %5lld/%lld%s\n", static_cast<long long>(e.step), static_cast<long long>(total_steps_),
               human_metrics(e.metrics).c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_eval(const EvalEvent& e) {
  std::fprintf(stderr, "step %5lld%s\n", static_cast<long long>(e.step), human_metrics(e.metrics).c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_skip(const SkipEvent& e) {
  std::fprintf(stderr, "step %5lld skipped: %s (%lld in a row, %lld in all); the weights were not updated\n",
               static_cast<long long>(e.step), e.reason.c_str(), static_cast<long long>(e.in_a_row),
               static_cast<long long>(e.total));
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_spike(const SpikeEvent& e) {
  std::string what = e.action;
  if (e.action == "rolled back")
    what +=
        " to step " + std::to_string(e.to_step) + ", " + std::to_string(e.data_skipped) + " steps of data passed over";
  std::string where;
  if (!e.layer.empty()) {
    char jump[96];
    std::snprintf(jump, sizeof jump, "; the gradients of %s jumped most (%.3gx their recent mean)", e.layer.c_str(),
                  e.layer_jump);
    where = jump;
  }
  std::fprintf(stderr, "step %5lld: %s spike, %.4g against a median of %.4g (limit %.4g)%s: %s (%lld in all)\n",
               static_cast<long long>(e.step), e.signal == "loss" ? "loss" : "gradient norm", e.value, e.median,
               e.limit, where.c_str(), what.c_str(), static_cast<long long>(e.total));
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_alert(const AlertEvent& e) {
  std::fprintf(stderr, "step %5lld: %s: %s\n", static_cast<long long>(e.step), e.kind.c_str(), e.message.c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_sample(const SampleEvent& e) {
  std::fprintf(stderr, "---- sample at step %lld ----\n%s\n----\n", static_cast<long long>(e.step), e.text.c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_checkpoint(const CheckpointEvent& e) {
  std::fprintf(stderr, "checkpoint: %s\n", e.path.c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_end(const EndEvent& end) {
  // A run stopped because its journal could not be written failed, and its end event says why.
  EndEvent e = end;
  if (journal_failure_said_ && journal_ && e.status != "failed")
    e.status = "failed", e.error = "the run journal could not be written: " + journal_->error();
  std::fprintf(stderr, "run %s at step %lld after %.1f s%s%s\n", e.status.c_str(), static_cast<long long>(e.step),
               e.wall_s, e.error.empty() ? "" : ": ", e.error.c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_warning(const WarningEvent& e) {
  std::fprintf(stderr, "warning: %s\n", e.message.c_str());
  if (wants_json()) emit(event_json(e));
}

void PrinterSink::on_progress(const ProgressEvent& e) {
  // No total: a heartbeat before long work (an evaluation, a checkpoint), for the journal's stall watchers only.
  if (e.total == 0) {
    if (wants_json()) emit(event_json(e));
    return;
  }
  int percent = static_cast<int>(100 * e.done / e.total);
  if (percent == last_percent_) return;
  last_percent_ = percent;
  if (wants_json()) emit(event_json(e));
  int filled = percent / 4;
  std::fprintf(stderr, "\r%s [%s%s] %3d%%%s", e.what.c_str(), std::string(filled, '#').c_str(),
               std::string(25 - filled, ' ').c_str(), percent, percent == 100 ? "\n" : "");
  if (percent == 100) last_percent_ = -1;
}

}  // namespace tokamak::cli
