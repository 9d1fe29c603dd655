// Each kind of a step's work held against its floor: the work it must do (FLOPs from the model's shapes for the
// matmuls, attention and the head; the bytes it must move for the memory-bound kinds), the time it took, and the
// least time the machine's two limits allow (work ÷ limit). LibTorch-free: a config, the profile's times by kind
// and the limits in, the rows out. `tokamak bench --kernels` and `train --kernels` print the table after the
// kernels'.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/base/config/config.h"

namespace tokamak {

struct CopyRate {
  double working_set = 0;  // bytes a copy touches: what it reads plus what it writes
  double bytes_per_s = 0;  // the best rate of the timed copies
};

// The memory limit: copy rates by working set, smallest first (engine/torch/metrics/memory_bandwidth.h measures them).
struct MemoryBandwidth {
  std::vector<CopyRate> rates;
  std::string source;  // how it was found ("measured: copies of 64 KiB to 512 MiB, 2 threads")
  // The rate for work touching `working_set` bytes a call: that of the largest measured working set not larger
  // than it (smaller sets run faster, so this never understates what the machine does for it); the smallest
  // set's rate below all of them; -1 when nothing was measured.
  double rate_for(double working_set) const;
  double dram() const { return rates.empty() ? -1 : rates.back().bytes_per_s; }  // the largest set's rate
};

// The least work of one optimizer step of one process (every micro-batch), by kind. Counted from GPT-2's shapes:
// matmul 6·(P + C·V)·tokens (P: the blocks' linear weights; C·V: the head's GEMMs, which op_kind counts as
// matrix products), attention 6·L·C·T·tokens (causal: half of the 12 that MFU counts); bytes that must cross
// memory at least once for the head's logits, the LayerNorms, GELUs, residual adds, the weights' casts under
// autocast and AdamW's fp32 state. Kinds with no model (other, unattributed) have no entry. A floor, not an
// estimate: work a kernel does beyond this (recomputation, extra passes) is part of its gap.
struct KindWork {
  double flops = 0, bytes = 0;
};
std::map<std::string, KindWork> step_work(const Config& config);

struct KindFloor {
  std::string kind;
  double ms = 0, calls = 0;  // measured, per step
  double flops = 0, bytes = 0;
  double floor_ms = -1;  // -1: its work is not counted (other, unattributed)
  std::string bound;     // "compute" or "memory": which limit sets the floor
  double of_limit = -1;  // floor ÷ time: the fraction of the limit it reached
};

struct Measured {
  double ms = 0, calls = 0;  // per step
};
// One row per measured kind, in op_kinds()' order: the floor is the larger of flops ÷ matmul_flops and bytes ÷
// the copy rate for the kind's bytes per call (on a GPU, config.device "cuda…", the largest set's rate for all).
std::vector<KindFloor> speed_of_light(const Config& config, const std::map<std::string, Measured>& measured,
                                      double matmul_flops, const MemoryBandwidth& bandwidth);

// The run's two limits as its start states them, a line each: "matmul limit: 181 GFLOP/s (measured: 2048³ fp32
// GEMM, 2 threads), MFU's peak" and "memory limit: 11.2 GB/s from memory (copies of 65.5 kB and 268 MB, 2
// threads)"; "unknown" for a limit at or below 0.
std::string machine_limits_lines(double matmul_flops, const std::string& matmul_source, double memory_bytes_per_s,
                                 const std::string& memory_source);

// The check on the matmul work: FLOPs per step from the model's shapes (step_work's matmul) beside the
// profiler's own count over the GEMM calls, as a line: "matmul work: 1.23 GFLOP a step from the model's shapes,
// 1.22 GFLOP by the profiler's count of its GEMM calls (99.2%)". Where the profiler counted nothing, it says so.
std::string matmul_work_check(double shapes_flops, double profiler_flops);

// The switches that act on a kind of work, in a line for a tooltip: what to try when the kind is far from its floor.
std::string kind_switches(const std::string& kind);

// The table: kind, ms/step, work, achieved rate, floor, gap, % of limit; then the step's floor (the sum of the
// floors) against its time, and the limits used.
std::string speed_of_light_table(const std::vector<KindFloor>& rows, double matmul_flops,
                                 const std::string& peak_source, const MemoryBandwidth& bandwidth);

}  // namespace tokamak
