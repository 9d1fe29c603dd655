// How `tokamak train` meets signals. SIGINT (Ctrl-C), SIGTERM (docker stop, systemd, Slurm preemption and
// time limits, torchrun teardown) and SIGHUP (a closed ssh session) all end a run the way Stop does: the
// step finishes, a checkpoint is written, the run ends as `stopped`. A second one of them ends the process at
// once. SIGPIPE is ignored for the whole process, so a reader of --json that goes away (`| head -1`) makes
// writes fail with EPIPE instead of killing the run: training goes on and the store records it.
#pragma once
#include <atomic>

namespace tokamak::cli {

// While alive, the three stop signals set *stop (first one) or end the process (second one).
// One at a time per process; the destructor restores the previous handlers.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::atomic<bool>* stop);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

// While alive (the data-parallel launcher), each stop signal adds one to *count; the launcher forwards the
// first to its workers as a stop and the second as a kill.
class CountSignals {
 public:
  explicit CountSignals(std::atomic<int>* count);
  ~CountSignals();
  CountSignals(const CountSignals&) = delete;
  CountSignals& operator=(const CountSignals&) = delete;
};

// SIG_IGN for SIGPIPE: failed writes return EPIPE, which every writer handles. Called once at start.
void ignore_broken_pipes();

}  // namespace tokamak::cli
