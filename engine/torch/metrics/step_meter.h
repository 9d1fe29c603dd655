// Times the training steps between two reports, leaving out the seconds spent on evaluation, samples and
// checkpoints, so tok/s and step time measure training alone. Call close() after the device has synchronized.
#pragma once
#include <chrono>
#include <cstdint>

namespace tokamak {

class StepMeter {
 public:
  using Clock = std::chrono::steady_clock;
  struct Window {
    int64_t steps = 0;
    double seconds = 0;  // training seconds in the window
  };

  StepMeter() : start_(Clock::now()) {}
  void step() { ++steps_; }
  void exclude(double seconds) { excluded_ += seconds; }
  // The window since the last close (or construction); the next one starts now.
  Window close() {
    const auto now = Clock::now();
    Window w{steps_, std::chrono::duration<double>(now - start_).count() - excluded_};
    start_ = now, steps_ = 0, excluded_ = 0;
    return w;
  }

 private:
  Clock::time_point start_;
  int64_t steps_ = 0;
  double excluded_ = 0;
};

}  // namespace tokamak
