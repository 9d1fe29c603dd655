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

#include "engine/metrics/speed_of_light.h"

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

constexpr double kBandwidthMinBytes = 64.0 * 1024;
constexpr double kBandwidthMaxBytesCpu = 256.0 * 1024 * 1024;    // past the last-level cache of the CPUs we meet
constexpr double kBandwidthMaxBytesCuda = 1024.0 * 1024 * 1024;  // past an H200's 50 MB L2 by far

// The working sets a full measurement times: kBandwidthMinBytes, ×4 each, up to `largest`. The cache keeps one
// rate per set, in this order.
std::vector<double> bandwidth_working_sets(double largest);

// A cache entry (one rate per working set of bandwidth_working_sets(largest), null where a cheap measurement left
// one out) as the rates it holds; none when it is not such an entry or holds no rate of the largest set, the one a
// run's start line states. The source is left for the caller to say.
std::optional<MemoryBandwidth> bandwidth_from_cache_entry(const nlohmann::json& entry, double largest);

}  // namespace tokamak
