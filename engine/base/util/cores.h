// The cores a process is given, and the other busy training processes that share them. Two LibTorch processes
// that each take every core wait on each other's spinning threads: side by side they train at a fraction of
// their speed alone (docs/journal/performance.md, "Two runs on one CPU").
#pragma once
#include <string>
#include <vector>

namespace tokamak {

// The CPUs this process may run on (its affinity: taskset, a Slurm job's cores, a container's cpuset), at least 1.
int cores_given();

struct BusyPeer {
  long pid = 0;
  std::string name;      // its comm: tokamak-engine, python3, …
  double cores = 0;      // CPU time over the sample, in cores (1.9 = nearly two cores busy)
  int shared = 0;        // how many of this process's cores it may run on too
};

// Other processes that have LibTorch loaded, share some of this process's cores, and used more than `min_cores`
// over a sample of `sample_s` seconds. This process, its parent and its children are left out (a launcher, the
// ranks of one run). Empty where /proc cannot be read.
std::vector<BusyPeer> busy_torch_peers(double sample_s = 0.3, double min_cores = 0.5);

// "1 other LibTorch process is busy on this run's cores (python3 pid 812 using 1.9 cores)".
std::string busy_peers_text(const std::vector<BusyPeer>& peers);
// What to do about it, for a hint.
extern const char* kShareCoresHint;

}  // namespace tokamak
