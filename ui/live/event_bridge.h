// EventBridge: the studio's EventSink. The run controller feeds it the events read from the child engine's
// stream (tests feed it from any thread); it only appends the event to a batch under a mutex and, when the
// batch was empty, emits one pending() signal. The GUI takes the whole batch from a short single-shot timer,
// so a fast run costs one redraw per ~30 ms, never one per step.
#pragma once
#include <QObject>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/base/run/events.h"

namespace tokamak::ui {

// Everything that arrived since the last take().
struct RunBatch {
  std::optional<RunStart> start;
  std::vector<StepEvent> steps;
  std::vector<EvalEvent> evals;
  std::vector<SampleEvent> samples;
  std::vector<CheckpointEvent> checkpoints;
  std::optional<ProgressEvent> progress;  // only the latest matters
  std::vector<SkipEvent> skips;
  std::vector<SpikeEvent> spikes;
  std::vector<AlertEvent> alerts;  // slowdown, stalled, stall_over
  // A rollback: what was drawn after this step is gone (trained again); the batch's own later rows are dropped.
  std::optional<int64_t> dropAfter;
  std::vector<WarningEvent> warnings;
  std::optional<EndEvent> end;
  bool empty() const {
    return !start && steps.empty() && evals.empty() && samples.empty() && checkpoints.empty() && !progress &&
           skips.empty() && spikes.empty() && alerts.empty() && warnings.empty() && !end;
  }
};

class EventBridge : public QObject, public EventSink {
  Q_OBJECT
 public:
  explicit EventBridge(QObject* parent = nullptr) : QObject(parent) {}

  void on_start(const RunStart& e) override;
  void on_step(const StepEvent& e) override;
  void on_eval(const EvalEvent& e) override;
  void on_sample(const SampleEvent& e) override;
  void on_checkpoint(const CheckpointEvent& e) override;
  void on_end(const EndEvent& e) override;
  void on_progress(const ProgressEvent& e) override;
  void on_skip(const SkipEvent& e) override;
  void on_spike(const SpikeEvent& e) override;
  void on_alert(const AlertEvent& e) override;
  void on_warning(const WarningEvent& e) override;

  // Called on the GUI thread: everything queued so far; the next event emits pending() again.
  RunBatch take();

 Q_SIGNALS:
  void pending();

 private:
  template <typename Fn>
  void append(Fn&& fn);

  std::mutex mu_;
  RunBatch batch_;
  bool signalled_ = false;
};

}  // namespace tokamak::ui
