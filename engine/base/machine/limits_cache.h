// What this machine's limits were measured at, as the measurements left them in the cache (cpu_peak.json: the GEMM
// rate per CPU, precision, thread count and LibTorch version; memory_bandwidth.json: copy rates per working set):
// read without LibTorch, so that the studio plans for this machine and makes `auto` concrete as a run here would,
// from what the runs measured. The measuring stays with LibTorch (engine/torch/device/cpu_peak.h,
// engine/torch/metrics/memory_bandwidth.h), which writes the entries under these same keys.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/perf/speed_of_light.h"

namespace tokamak {

// The LibTorch version this build links (the build's Torch_VERSION; LibTorch's TORCH_VERSION, checked equal where
// the engine writes the entries): a new LibTorch measures again.
const char* torch_version_built();

struct CpuPeak {
  double flops = -1;   // FLOP/s; -1 when it could not be measured
  std::string source;  // how it was found, for the start-up line ("measured: 2048³ fp32 GEMM, 2 threads")
};

std::string cpu_peak_cache_path();
// "AMD EPYC|bf16|2|2.11.0": the CPU, the precision ("bf16" for any bf16 one, else "fp32"), threads, LibTorch.
std::string cpu_peak_key(const std::string& precision, int threads);
// The cached best for PRECISION at THREADS; none when not cached yet.
std::optional<CpuPeak> cached_cpu_peak(const std::string& precision, int threads);
// Whether a bf16 GEMM beats an fp32 one on this CPU at `threads`, by the cached best rates of both; nullopt while
// either is not measured yet. The instruction flags alone do not say it: a 2-core Xeon with AVX-512 BF16 but no AMX
// measured bf16 at half its fp32 rate (167 against 331 GFLOP/s), and its default run 1.45× faster in fp32.
std::optional<bool> cpu_bf16_pays(int threads);

constexpr double kBandwidthMinBytes = 64.0 * 1024;
constexpr double kBandwidthMaxBytesCpu = 256.0 * 1024 * 1024;    // past the last-level cache of the CPUs we meet
constexpr double kBandwidthMaxBytesCuda = 1024.0 * 1024 * 1024;  // past an H200's 50 MB L2 by far

std::string bandwidth_cache_path();
// The device's name, the threads that copied (0 on a GPU: one device copy) and LibTorch's version.
std::string bandwidth_cache_key(const std::string& device_name, int threads);
// The working sets a full measurement times: kBandwidthMinBytes, ×4 each, up to `largest`. The cache keeps one
// rate per set, in this order.
std::vector<double> bandwidth_working_sets(double largest);
// A cache entry (one rate per working set of bandwidth_working_sets(largest), null where a cheap measurement left
// one out) as the rates it holds; none when it is not such an entry or holds no rate of the largest set, the one a
// run's start line states. The source is left for the caller to say.
std::optional<MemoryBandwidth> bandwidth_from_cache_entry(const nlohmann::json& entry, double largest);
// "copies of 65.5 kB to 268 MB, 2 threads" ("… on the GPU" for GPU): the sets the rates come from, and what copied.
std::string copies_text(bool gpu, int threads, const std::vector<CopyRate>& rates);
// A CPU's (threads > 0) or a GPU's (threads 0) kept rates, their source "kept from earlier measurements: …"; none
// when the cache has no entry for them.
std::optional<MemoryBandwidth> cached_memory_bandwidth(const std::string& device_name, int threads);

}  // namespace tokamak
