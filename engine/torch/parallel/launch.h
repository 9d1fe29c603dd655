// The local launcher behind `tokamak train --gpus N`: it serves the rendezvous store on loopback (as
// torchrun's agent does), starts N copies of this program with RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR /
// MASTER_PORT set, and watches them. POSIX only; it reports through callbacks and never prints.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

struct LaunchOptions {
  int world_size = 2;
  // The command each worker runs; empty = this process's own command line (/proc/self/cmdline).
  std::vector<std::string> argv;
  // After the first worker fails, how long the others get to end on their own (they notice through the
  // process group within dist.timeout_s; rank 0 then records the failure and keeps its checkpoint) before
  // they are killed. Once rank 0 has ended, the rest are killed at once.
  std::chrono::milliseconds grace{std::chrono::seconds(70)};
  // Set from a signal handler: forwarded to the workers as SIGINT (they stop together at a report step);
  // a second request kills them.
  const std::atomic<int>* interrupts = nullptr;
  std::function<void(const std::string&)> note;  // one-line progress messages ("rank 2 was killed by ...")
};

struct LaunchResult {
  int exit_code = 0;     // 0 when every worker exited 0; else the first failure's code (128+signal if killed)
  int failed_rank = -1;  // the first worker to fail
  std::string reason;    // "rank 2 (pid 1234) was killed by signal 9 (Killed)"
};

LaunchResult launch_workers(const LaunchOptions& options);

}  // namespace tokamak
