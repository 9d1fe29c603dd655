// Where a step's time goes: the phases of one training step (data wait, forward, backward, the all-reduce
// not hidden under backward, optimizer, the rest), measured at report steps only. Between begin() and the last lap()
// every interval between two marks belongs to exactly one phase, so the phases add up to the profiled step's
// time by construction; what is tested is that this step time is the one the loop's StepMeter reports.
// CPU: the monotonic clock (LibTorch's CPU ops return when done). CUDA: timing events recorded on the
// current stream, so no mark waits for the device; they are read after the report step's own synchronize,
// which the loop does anyway — the profile adds no host sync (docs/PERFORMANCE.md: its overhead).
#pragma once
#include <c10/core/Device.h>

#include <array>
#include <memory>

#include "engine/metrics/metrics.h"
#include "engine/metrics/phases.h"

namespace tokamak {

class StepProfile {
 public:
  explicit StepProfile(const c10::Device& device);
  ~StepProfile();
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;

  void begin();       // the step starts now
  void lap(Phase p);  // the time since the previous mark (or begin) was spent in p
  // The phases in ms, as metrics (phase_allreduce_ms only when `data_parallel`). On CUDA, call it after the
  // device has synchronized.
  void add_to(Metrics& out, bool data_parallel) const;
  std::array<double, kPhaseCount> phases_ms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
