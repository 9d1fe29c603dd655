// The step profile's two clocks (see step_profile.h): host time on a CPU, CUDA timing events on a GPU.
#include "engine/torch/metrics/step_profile.h"

#include <algorithm>
#include <chrono>
#include <vector>

#ifdef TOKAMAK_WITH_CUDA
#include <c10/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace tokamak {

struct StepProfile::Impl {
  using Clock = std::chrono::steady_clock;
  c10::Device device;
  std::array<double, kPhaseCount> ms{};
  std::array<bool, kPhaseCount> lapped{};
  int64_t steps = 0;
  Clock::time_point last;  // CPU: the previous mark
#ifdef TOKAMAK_WITH_CUDA
  // One event per mark, reused from one window to the next (creating events is not free); the interval that
  // ends at marks[i] was spent in phase_of[i], unless marks[i] starts a step (the gap between steps is not
  // a phase: other gets it as the rest of step_ms).
  std::vector<c10::cuda::CUDAEvent> marks;
  std::vector<Phase> phase_of;
  std::vector<bool> starts;
  size_t used = 0;
  bool read = true;  // the events since reset() were summed into ms

  void record(Phase p, bool start) {
    if (used == marks.size()) marks.emplace_back(cudaEventDefault);  // timing enabled
    if (phase_of.size() < used + 1) phase_of.resize(used + 1), starts.resize(used + 1);
    marks[used].record(c10::cuda::getCurrentCUDAStream(device.index() < 0 ? 0 : device.index()));
    phase_of[used] = p, starts[used] = start;
    ++used, read = false;
  }
  // After the device synchronized: every event has completed, reading them waits for nothing.
  void sum() {
    if (read) return;
    ms.fill(0);
    for (size_t i = 1; i < used; ++i)
      if (!starts[i]) ms[static_cast<int>(phase_of[i])] += marks[i - 1].elapsed_time(marks[i]);
    read = true;
  }
#endif
  explicit Impl(const c10::Device& d) : device(d) {}
};

StepProfile::StepProfile(const c10::Device& device) : impl_(std::make_unique<Impl>(device)) {}
StepProfile::~StepProfile() = default;

void StepProfile::reset() {
  impl_->ms.fill(0);
  impl_->lapped.fill(false);
  impl_->steps = 0;
#ifdef TOKAMAK_WITH_CUDA
  impl_->used = 0, impl_->read = true;
#endif
}

void StepProfile::begin() {
  ++impl_->steps;
#ifdef TOKAMAK_WITH_CUDA
  if (impl_->device.is_cuda()) return impl_->record(Phase::kOther, /*start=*/true);
#endif
  impl_->last = Impl::Clock::now();
}

void StepProfile::lap(Phase p) {
  impl_->lapped[static_cast<int>(p)] = true;
#ifdef TOKAMAK_WITH_CUDA
  if (impl_->device.is_cuda()) return impl_->record(p, /*start=*/false);
#endif
  const auto now = Impl::Clock::now();
  impl_->ms[static_cast<int>(p)] += std::chrono::duration<double, std::milli>(now - impl_->last).count();
  impl_->last = now;
}

std::array<double, kPhaseCount> StepProfile::phases_ms() const {
#ifdef TOKAMAK_WITH_CUDA
  if (impl_->device.is_cuda()) impl_->sum();
#endif
  return impl_->ms;
}

int64_t StepProfile::steps() const { return impl_->steps; }
bool StepProfile::lapped(Phase p) const { return impl_->lapped[static_cast<int>(p)]; }

namespace {
thread_local StepProfile* active = nullptr;
}
StepProfile* active_step_profile() { return active; }
ActiveStepProfile::ActiveStepProfile(StepProfile* profile) : before_(active) { active = profile; }
ActiveStepProfile::~ActiveStepProfile() { active = before_; }

void StepProfile::add_to(Metrics& out, bool data_parallel, double step_ms) const {
  std::array<double, kPhaseCount> ms = phases_ms();
  const double n = static_cast<double>(std::max<int64_t>(impl_->steps, 1));
  double sum = 0;
  for (double& m : ms) sum += (m /= n);
  // What no mark covers: the report itself, the checkpoint and evaluation checks between steps.
  ms[static_cast<int>(Phase::kOther)] += std::max(0.0, step_ms - sum);
  for (int i = 0; i < kPhaseCount; ++i) {
    const Phase p = static_cast<Phase>(i);
    if (p == Phase::kAllreduce && !data_parallel) continue;
    if (p == Phase::kHead && !impl_->lapped[i]) continue;  // native layers: the head is in forward and backward
    out.add(phase_names()[i].metric, ms[i]);
  }
}

}  // namespace tokamak
