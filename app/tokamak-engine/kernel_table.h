// `--kernels N` of bench and train (kernel_profile.h): where a run's profiled steps spent their time, kernel by
// kernel, through LibTorch's own profiler (Kineto; CUPTI on CUDA), printed after the run. The step profile
// (phase_*_ms) says which phase of a step costs; this says which kernels inside it, the view PyTorch's profiler
// gives of a Python loop.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "engine/base/perf/speed_of_light.h"

namespace tokamak::cli {

// Profiles from start() to table(): on a CUDA device its kernels and copies by device time, on a CPU the
// operators by self time (each op's time less the ops it called). Only the thread that calls start() is
// recorded on a CPU.
class KernelTable {
 public:
  void start(bool cuda);
  // The `top` costliest names, each with its calls and ms per step over `steps` steps, its share, and a line of
  // totals by kind (matrix products, attention, Tokamak's kernels, optimizer, copies, other). Stops profiling.
  std::string table(int64_t steps, int top);
  bool running() const { return running_; }
  // Stops profiling with no table: a run that ended before its steps to profile did.
  void stop();
  // What table() found, by kind: ms and calls per step (the speed-of-light table's measured side).
  const std::map<std::string, Measured>& kinds() const { return kinds_; }
  // The FLOPs per step of the GEMM calls (aten::mm, addmm, bmm, baddbmm) by the profiler's own count from their
  // input shapes: the check on the speed-of-light table's matmul work, which is counted from the model's shapes.
  double gemm_flops() const { return gemm_flops_; }

 private:
  bool running_ = false, cuda_ = false;
  std::map<std::string, Measured> kinds_;
  double gemm_flops_ = 0;
};

}  // namespace tokamak::cli
