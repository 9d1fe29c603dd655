// What the step profile adds to a profiled step on a CPU: begin(), the laps of one step with ACCUM
// micro-steps (3 per micro-step, 4 around them, as the trainer and forward_backward make them) and add_to()
// into the step's metrics, timed over many repetitions. Usage: profile_cost [ACCUM] [REPETITIONS]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "engine/torch/metrics/step_profile.h"

int main(int argc, char** argv) {
  using namespace tokamak;
  const int accum = argc > 1 ? std::atoi(argv[1]) : 1;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 200000;
  StepProfile profile(c10::Device(c10::kCPU));
  double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) {
    Metrics metrics;
    profile.reset();
    profile.begin();
    profile.lap(Phase::kOther);
    for (int m = 0; m < accum; ++m) {
      profile.lap(Phase::kData);
      profile.lap(Phase::kForward);
      profile.lap(Phase::kBackward);
    }
    profile.lap(Phase::kOther);
    profile.lap(Phase::kOptimizer);
    profile.lap(Phase::kOther);
    profile.add_to(metrics, false, 1.0);
    sink += metrics.get("phase_other_ms");
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("accum %d: %.0f ns per profiled step (%d repetitions)%s\n", accum, ns / reps, reps, sink < 0 ? "!" : "");
  return 0;
}
