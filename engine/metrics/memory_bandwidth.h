// The machine's memory bandwidth, measured: the second limit a step is held against (the first is the matmul
// rate). A copy of a buffer is timed at working sets from a cache's size to far past the last-level cache, so
// that a kernel is held against what this machine moves for data of its size: on a CPU a tiny model's tensors
// live in cache, where a copy runs several times faster than from DRAM; on a GPU a step's tensors are past its
// L2 and the largest size is the one that counts.
#pragma once
#include <c10/core/Device.h>

#include "engine/metrics/speed_of_light.h"

namespace tokamak {

// Times at::Tensor::copy_ (LibTorch's threads on a CPU, one device copy on a GPU) over working sets of
// kBandwidthMinBytes to the device's largest (×4 each), the best of `repeats` at each. Uncached.
MemoryBandwidth measure_memory_bandwidth(const c10::Device& device, int repeats = 3);

// The measurement, kept in cache_dir()/memory_bandwidth.json under the device's name, LibTorch's thread count and
// version: each size's best rate over every measurement (one taken while a build shared the cores does not stay
// the limit).
MemoryBandwidth memory_bandwidth(const c10::Device& device);

constexpr double kBandwidthMinBytes = 64.0 * 1024;
constexpr double kBandwidthMaxBytesCpu = 256.0 * 1024 * 1024;    // past the last-level cache of the CPUs we meet
constexpr double kBandwidthMaxBytesCuda = 1024.0 * 1024 * 1024;  // past an H200's 50 MB L2 by far

}  // namespace tokamak
