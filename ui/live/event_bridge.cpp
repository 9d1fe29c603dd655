// EventBridge: append under a lock, one signal per batch (see event_bridge.h).
#include "ui/live/event_bridge.h"

#include <algorithm>

namespace tokamak::ui {

template <typename Fn>
void EventBridge::append(Fn&& fn) {
  bool notify = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn(batch_);
    notify = !signalled_;
    signalled_ = true;
  }
  // Emitted outside the lock: the receiver lives on the GUI thread, so this only posts an event.
  if (notify) Q_EMIT pending();
}

void EventBridge::on_start(const RunStart& e) {
  append([&](RunBatch& b) { b.start = e; });
}
void EventBridge::on_step(const StepEvent& e) {
  append([&](RunBatch& b) { b.steps.push_back(e); });
}
void EventBridge::on_eval(const EvalEvent& e) {
  append([&](RunBatch& b) { b.evals.push_back(e); });
}
void EventBridge::on_sample(const SampleEvent& e) {
  append([&](RunBatch& b) { b.samples.push_back(e); });
}
void EventBridge::on_checkpoint(const CheckpointEvent& e) {
  append([&](RunBatch& b) { b.checkpoints.push_back(e); });
}
void EventBridge::on_end(const EndEvent& e) {
  append([&](RunBatch& b) { b.end = e; });
}
void EventBridge::on_progress(const ProgressEvent& e) {
  append([&](RunBatch& b) { b.progress = e; });
}

void EventBridge::on_skip(const SkipEvent& e) {
  append([&](RunBatch& b) { b.skips.push_back(e); });
}
void EventBridge::on_spike(const SpikeEvent& e) {
  append([&](RunBatch& b) {
    b.spikes.push_back(e);
    if (e.action != "rolled back") return;
    const auto drop = [&](auto& events) {
      events.erase(std::remove_if(events.begin(), events.end(), [&](const auto& x) { return x.step > e.to_step; }),
                   events.end());
    };
    drop(b.steps), drop(b.evals), drop(b.samples);
    b.dropAfter = b.dropAfter ? std::min(*b.dropAfter, e.to_step) : e.to_step;
  });
}
void EventBridge::on_alert(const AlertEvent& e) {
  append([&](RunBatch& b) { b.alerts.push_back(e); });
}
void EventBridge::on_warning(const WarningEvent& e) {
  append([&](RunBatch& b) { b.warnings.push_back(e); });
}

RunBatch EventBridge::take() {
  std::lock_guard<std::mutex> lock(mu_);
  RunBatch out = std::move(batch_);
  batch_ = RunBatch{};
  signalled_ = false;
  return out;
}

}  // namespace tokamak::ui
