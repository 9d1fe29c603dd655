// A CPU run's threads while other LibTorch processes are busy on its cores. Two processes that each take every
// core wait on each other's spinning threads: side by side each trains at a quarter of its speed alone, while
// each with its share of the cores trains at well over half (docs/journal/performance.md, "Two runs on one CPU"). A
// thread of its own looks every few seconds (engine/base/util/cores.h); the trainer asks between steps and sets
// LibTorch's threads to the answer.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace tokamak {

class CoreSharing {
 public:
  struct Options {
    double interval_s = 5;   // between looks
    double min_cores = 0.5;  // a process busier than this counts (busy_torch_peers)
    // Which busy processes count: all when empty (a test names its own peer, so that another suite busy on the
    // machine does not change what it sees).
    std::function<bool(long pid)> counts;
  };
  // threads: what the run takes alone (its cores). adapt: false when the user set the threads (they are kept,
  // and the first busy peer is said, once). The first look is at once.
  CoreSharing(int threads, bool adapt, Options options);
  CoreSharing(int threads, bool adapt) : CoreSharing(threads, adapt, Options{}) {}
  ~CoreSharing();
  CoreSharing(const CoreSharing&) = delete;
  CoreSharing& operator=(const CoreSharing&) = delete;

  // A line to report (a warning event) since the last call, and the threads to use from now on (0: as they are);
  // false when there is nothing new.
  bool poll(int* threads, std::string* line);

  // Whether runs adapt at all: not when TOKAMAK_NO_CORE_SHARING is set (the test suites set it, so that what
  // another test does on the machine never changes a run's threads, and with them its sums' order).
  static bool enabled();

 private:
  void look();

  const int threads_;
  const bool adapt_;
  const Options o_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int desired_, applied_;
  std::string why_;
  bool said_ = false;  // not adapting: the one line is said
  std::thread thread_;
};

}  // namespace tokamak
