// Does the engine's speed depend on the thread that trains? Trains the same run on the main thread and on a
// fresh std::thread (as the studio's old worker and any embedder would), alternately, ROUNDS times each, and
// prints the mean tok/s of each over the steps after the first report (warm-up excluded).
// Usage: thread_bench ROUNDS key=value... (config overrides, e.g. model.preset=nano train.steps=30)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/torch/train/trainer.h"

namespace {

struct Speed : tokamak::EventSink {
  double sum = 0;
  int n = 0;
  bool warm = false;
  void on_step(const tokamak::StepEvent& e) override {
    if (warm) sum += e.tok_s, ++n;
    warm = true;  // the first report window holds the warm-up
  }
  double mean() const { return n ? sum / n : 0; }
};

double run_once(const tokamak::Config& c) {
  Speed s;
  tokamak::EndEvent end = tokamak::train(c, s);
  if (end.status != "finished")
    std::fprintf(stderr, "run %s: %s\n", end.status.c_str(), end.error.c_str()), std::exit(1);
  return s.mean();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: thread_bench ROUNDS key=value...\n"), 2;
  const int rounds = std::atoi(argv[1]);
  tokamak::Config c;
  tokamak::apply_overrides(c, std::vector<std::string>(argv + 2, argv + argc));
  double main_sum = 0, thread_sum = 0;
  for (int r = 0; r < rounds; ++r) {
    const double on_main = run_once(c);
    double on_thread = 0;
    std::thread([&] { on_thread = run_once(c); }).join();
    std::printf("round %d: main thread %.0f tok/s, worker thread %.0f tok/s\n", r + 1, on_main, on_thread);
    std::fflush(stdout);
    main_sum += on_main, thread_sum += on_thread;
  }
  std::printf("mean: main thread %.0f tok/s, worker thread %.0f tok/s, worker/main %.3f\n", main_sum / rounds,
              thread_sum / rounds, thread_sum / main_sum);
}
