// What a run reports, and the interface of everything that listens: the CLI printer, the run store and the
// studio are all sinks. The trainer calls the sink on its own thread; a sink that needs another thread
// (the studio, the store's writer) hands the event over itself.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/run/metrics.h"

namespace tokamak {

struct RunStart {
  std::string run_uid;  // stable across resumes: a resumed run continues the same history
  std::string name;
  std::string config_json;  // the full effective config (engine/base/config), as JSON
  std::string dataset;      // what the data source resolved to
  std::string model;        // preset name or "custom"
  int64_t n_params = 0;
  std::string device;    // "cpu", "cuda:0", ...
  std::string gpu_name;  // empty on CPU
  int world_size = 1;
  std::string tokamak_version;  // the build that trains it (TOKAMAK_VERSION); "" from a build before 0.2
  std::string torch_version;
  std::string cuda_version;  // empty when LibTorch has no CUDA
  std::string host;
  int64_t start_step = 0;  // > 0 when resumed from a checkpoint
  int64_t total_steps = 0;
  int64_t tokens_per_step = 0;
  double peak_flops = -1;   // MFU's denominator per device; -1 when unknown (no MFU then)
  std::string peak_source;  // "datasheet (...)" or "measured: 2048³ fp32 GEMM, 2 threads"
  // The second limit beside the matmul rate: the copy rate past the caches (engine/torch/metrics/memory_bandwidth.h);
  // -1 when unknown.
  double memory_bytes_per_s = -1;
  std::string memory_source;  // "kept from earlier measurements: copies of 65.5 kB to 268 MB, 2 threads"
};

// One report step. step, tokens and wall_s are the axes every metric is plotted against; everything measured
// is a named value in `metrics` (engine/base/run/metrics.h): "loss", "lr", "grad_norm", "tok_s", "step_ms",
// "mfu" (where the device's peak is known: a GPU's datasheet, a CPU's measured GEMM rate), "mem_allocated",
// "mem_reserved", "mem_peak", "skipped_steps"…
struct StepEvent {
  int64_t step = 0;    // 1-based: the number of optimizer steps done (skipped ones included)
  int64_t tokens = 0;  // tokens trained on so far (all ranks)
  double wall_s = 0;   // seconds since the run (or resume) started
  Metrics metrics;
  double metric(const std::string& key) const { return metrics.get(key); }  // NaN when not reported
};

// An evaluation: "val_loss" in metrics.
struct EvalEvent {
  int64_t step = 0;
  int64_t tokens = 0;
  double wall_s = 0;
  Metrics metrics;
  double metric(const std::string& key) const { return metrics.get(key); }
};

// A step whose loss or gradients were not finite: the weights were left as they were. The run fails after
// train.max_skipped_steps of them in a row.
struct SkipEvent {
  int64_t step = 0;      // the step that was skipped (1-based)
  std::string reason;    // "loss is nan", "gradients are inf", ...
  int64_t in_a_row = 0;  // consecutive skipped steps, this one included
  int64_t total = 0;     // skipped steps in this run (or resume) so far
};

// A loss spike (engine/base/run/spike_detector.h) and what health.spike_action did about it.
struct SpikeEvent {
  int64_t step = 0;         // the step whose loss or gradient norm spiked (1-based)
  int64_t tokens = 0;       // tokens trained on by then, and seconds since the run (or resume) started: the
  double wall_s = 0;        // plots' other axes
  std::string signal;       // "loss" or "grad_norm"
  double value = 0;         // its value at that step
  double median = 0;        // the window's median of that signal
  double limit = 0;         // above it is a spike
  std::string action;       // "warned", "skipped" or "rolled back"
  int64_t to_step = 0;      // rolled back: the checkpoint's step the run went on from (its later steps are gone)
  int64_t data_skipped = 0; // rolled back: steps of data passed over (the window that led to the spike)
  int64_t total = 0;        // spikes in this run so far
  std::string layer;        // the parameter group whose gradient RMS jumped most (e.g. "h3.attn"); "" = not measured
  double layer_jump = 0;    // that group's gradient RMS over its running mean
};

// Something about the run's pace a person would want told: "slowdown" (the trainer: tok/s well below its running
// median for several reports, naming what changed on the machine), "stalled" (a follower: no step for
// health.stall_factor × the usual time between reports) and "stall_over" (steps again).
struct AlertEvent {
  std::string kind;
  int64_t step = 0;     // the last step reported
  std::string message;  // one line
};

struct SampleEvent {
  int64_t step = 0;
  std::string prompt;
  std::string text;  // the prompt followed by what the model wrote
};

struct CheckpointEvent {
  int64_t step = 0;
  std::string path;
};

// Long preparation before the first step (tokenizing a dataset the first time).
struct ProgressEvent {
  std::string what;  // "tokenizing jargon.txt"
  uint64_t done = 0;
  uint64_t total = 0;
};

// Something the user should know that does not stop the run (a skipped file, replaced invalid UTF-8).
struct WarningEvent {
  std::string message;  // one line
};

struct EndEvent {
  std::string status;  // finished | stopped | failed
  std::string error;   // the one-line reason when failed
  int64_t step = 0;
  int64_t tokens = 0;
  double wall_s = 0;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_start(const RunStart&) {}
  virtual void on_step(const StepEvent&) {}
  virtual void on_eval(const EvalEvent&) {}
  virtual void on_skip(const SkipEvent&) {}
  virtual void on_spike(const SpikeEvent&) {}
  virtual void on_alert(const AlertEvent&) {}
  virtual void on_sample(const SampleEvent&) {}
  virtual void on_checkpoint(const CheckpointEvent&) {}
  virtual void on_end(const EndEvent&) {}
  virtual void on_progress(const ProgressEvent&) {}
  virtual void on_warning(const WarningEvent&) {}
};

// Sends every event to several sinks, in order: the CLI's printer, store and notifications, the studio's bridge
// and store. Here beside the interface, so that a reader of events needs no room of the trainer for it.
class FanOutSink : public EventSink {
 public:
  void add(EventSink* sink) { sinks_.push_back(sink); }
  void on_start(const RunStart& e) override {
    for (auto* s : sinks_) s->on_start(e);
  }
  void on_step(const StepEvent& e) override {
    for (auto* s : sinks_) s->on_step(e);
  }
  void on_eval(const EvalEvent& e) override {
    for (auto* s : sinks_) s->on_eval(e);
  }
  void on_skip(const SkipEvent& e) override {
    for (auto* s : sinks_) s->on_skip(e);
  }
  void on_spike(const SpikeEvent& e) override {
    for (auto* s : sinks_) s->on_spike(e);
  }
  void on_alert(const AlertEvent& e) override {
    for (auto* s : sinks_) s->on_alert(e);
  }
  void on_sample(const SampleEvent& e) override {
    for (auto* s : sinks_) s->on_sample(e);
  }
  void on_checkpoint(const CheckpointEvent& e) override {
    for (auto* s : sinks_) s->on_checkpoint(e);
  }
  void on_end(const EndEvent& e) override {
    for (auto* s : sinks_) s->on_end(e);
  }
  void on_progress(const ProgressEvent& e) override {
    for (auto* s : sinks_) s->on_progress(e);
  }
  void on_warning(const WarningEvent& e) override {
    for (auto* s : sinks_) s->on_warning(e);
  }

 private:
  std::vector<EventSink*> sinks_;
};

}  // namespace tokamak
