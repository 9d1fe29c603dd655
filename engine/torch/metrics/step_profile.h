// Where a step's time goes: the phases of the training steps (data wait, forward, backward, the all-reduce
// not hidden under backward, optimizer, the rest), measured on every step of a report window — the same steps
// the step_ms beside them is the mean of — and reported as their mean per step. Between begin() and the last
// lap() every interval between two marks belongs to exactly one phase; what the marks do not cover (between
// steps: the report itself, the checkpoint and evaluation checks) is added to "other", so the phases add up to
// step_ms.
// CPU: the monotonic clock (LibTorch's CPU ops return when done). CUDA: timing events recorded on the
// current stream, so no mark waits for the device; they are read after the report step's own synchronize,
// which the loop does anyway — the profile adds no host sync (docs/PERFORMANCE.md: its overhead).
#pragma once
#include <c10/core/Device.h>

#include <array>
#include <cstdint>
#include <memory>

#include "engine/base/run/metrics.h"
#include "engine/base/run/phases.h"

namespace tokamak {

class StepProfile {
 public:
  explicit StepProfile(const c10::Device& device);
  ~StepProfile();
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;

  void reset();       // a report window starts: nothing measured yet
  void begin();       // a step starts now
  void lap(Phase p);  // the time since the previous mark (or begin) was spent in p
  // The window's phases in ms per step (the sums over its steps divided by their count), as metrics
  // (phase_allreduce_ms only when `data_parallel`); `step_ms` (the meter's, over the same steps) less their
  // sum is added to other. On CUDA, call it after the device has synchronized.
  void add_to(Metrics& out, bool data_parallel, double step_ms) const;
  // The window's measured phases, summed over its steps (nothing added to other).
  std::array<double, kPhaseCount> phases_ms() const;
  int64_t steps() const;       // steps begun since reset()
  bool lapped(Phase p) const;  // p was lapped since reset() (a phase a run never enters is not reported)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The profile forward_backward is timing on this thread, or null: the model laps the fused classifier's head as
// a phase of its own from inside its forward (engine/torch/model/gpt.cpp).
StepProfile* active_step_profile();
class ActiveStepProfile {
 public:
  explicit ActiveStepProfile(StepProfile* profile);
  ~ActiveStepProfile();
  ActiveStepProfile(const ActiveStepProfile&) = delete;
  ActiveStepProfile& operator=(const ActiveStepProfile&) = delete;

 private:
  StepProfile* before_;
};

}  // namespace tokamak
