// A CPU run's threads while other LibTorch processes are busy on its cores. Two processes that each take every
// core wait on each other's spinning threads: side by side each trains at a quarter of its speed alone, while
// each with its share of the cores trains at well over half (docs/PERFORMANCE.md, "Two runs on one CPU"). A
// thread of its own looks every few seconds (engine/core/util/cores.h); the trainer asks between steps and sets
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
  // threads: what the run takes alone (its cores). adapt: false when the user set the threads (they are kept,
  // and a busy peer at the start is only said). The first look is at once.
  // counts: which busy processes count (all of them when empty; a test names its own peer, so that another
  // suite busy on the machine does not change what it sees).
  CoreSharing(int threads, bool adapt, double interval_s = 5, std::function<bool(long pid)> counts = {});
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
  const double interval_s_;
  const std::function<bool(long)> counts_;
  std::mutex mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  int desired_, applied_;
  std::string why_;
  bool said_ = false;  // not adapting: the one line at the start is said
  std::thread thread_;
};

}  // namespace tokamak
