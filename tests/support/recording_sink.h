// An EventSink that keeps every event of an in-process run, spelled once for the suites that train through
// train(): what a test asserts on is what the run reported, in order. Header-only: events are plain structs.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/run/events.h"

namespace tokamak::test {

struct RecordingSink : EventSink {
  RunStart start;
  std::vector<StepEvent> steps;
  std::vector<EvalEvent> evals;
  std::vector<SkipEvent> skips;
  std::vector<SpikeEvent> spikes;
  std::vector<AlertEvent> alerts;
  std::vector<SampleEvent> samples;
  std::vector<CheckpointEvent> checkpoints;
  std::vector<ProgressEvent> progress;
  EndEvent end;
  // Every event's kind in the order they came ("step", "eval", "checkpoint", "heartbeat": a progress event without
  // a total, "progress"), for a test of what comes before what.
  std::vector<std::string> order;
  // Called on each step after it is recorded: a test that acts mid-run (stops it, reads a file).
  std::function<void(const StepEvent&)> on_each_step;

  void on_start(const RunStart& e) override { start = e; }
  void on_step(const StepEvent& e) override {
    order.push_back("step");
    steps.push_back(e);
    if (on_each_step) on_each_step(e);
  }
  void on_eval(const EvalEvent& e) override {
    order.push_back("eval");
    evals.push_back(e);
  }
  void on_progress(const ProgressEvent& e) override {
    order.push_back(e.total == 0 ? "heartbeat" : "progress");
    progress.push_back(e);
  }
  void on_skip(const SkipEvent& e) override { skips.push_back(e); }
  void on_spike(const SpikeEvent& e) override { spikes.push_back(e); }
  void on_alert(const AlertEvent& e) override { alerts.push_back(e); }
  void on_sample(const SampleEvent& e) override { samples.push_back(e); }
  void on_checkpoint(const CheckpointEvent& e) override {
    order.push_back("checkpoint");
    checkpoints.push_back(e);
  }
  void on_end(const EndEvent& e) override { end = e; }

  // The loss of each step that reported one, in order.
  std::vector<double> losses() const {
    std::vector<double> v;
    for (const StepEvent& s : steps)
      if (s.metrics.has("loss")) v.push_back(s.metric("loss"));
    return v;
  }
  std::vector<std::string> sample_texts() const {
    std::vector<std::string> v;
    for (const SampleEvent& s : samples) v.push_back(s.text);
    return v;
  }
  std::vector<int64_t> checkpoint_steps() const {
    std::vector<int64_t> v;
    for (const CheckpointEvent& c : checkpoints) v.push_back(c.step);
    return v;
  }
  std::vector<std::string> checkpoint_paths() const {
    std::vector<std::string> v;
    for (const CheckpointEvent& c : checkpoints) v.push_back(c.path);
    return v;
  }
};

}  // namespace tokamak::test
