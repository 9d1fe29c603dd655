// The machine's memory bandwidth, measured: the second limit a step is held against (the first is the matmul
// rate). A copy of a buffer is timed at working sets from a cache's size to far past the last-level cache, so
// that a kernel is held against what this machine moves for data of its size: on a CPU a tiny model's tensors
// live in cache, where a copy runs several times faster than from DRAM; on a GPU a step's tensors are past its
// L2 and the largest size is the one that counts.
#pragma once
#include <c10/core/Device.h>

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "engine/base/machine/limits_cache.h"
#include "engine/base/perf/speed_of_light.h"

namespace tokamak {

// Times at::Tensor::copy_ (LibTorch's threads on a CPU, one device copy on a GPU) over working sets of
// kBandwidthMinBytes to the device's largest (×4 each), the best of `repeats` at each. Uncached.
MemoryBandwidth measure_memory_bandwidth(const c10::Device& device, int repeats = 3);

// The measurement, kept in cache_dir()/memory_bandwidth.json under the device's name, LibTorch's thread count and
// version: each size's best rate over every measurement (one taken while a build shared the cores does not stay
// the limit). What `bench --kernels` holds a profile against.
MemoryBandwidth memory_bandwidth(const c10::Device& device);

// The limit a run's start line states and its store row keeps, without memory_bandwidth()'s half a second at every
// start: this machine's cached rates when the cache has them; else the smallest and the largest working sets alone,
// measured now (a tenth of a second or two on a CPU) and cached, so the next start only reads them and a later
// memory_bandwidth() fills in the sizes between. A measurement resets the device's peak memory after it.
MemoryBandwidth start_memory_bandwidth(const c10::Device& device);

// The working sets, their cache and its keys are LibTorch-free: engine/base/machine/limits_cache.h.

}  // namespace tokamak
