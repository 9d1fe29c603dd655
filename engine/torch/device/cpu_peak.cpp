// The CPU's measured matmul peak (see cpu_peak.h).
#include "engine/torch/device/cpu_peak.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string_view>
#include <nlohmann/json.hpp>

#include "engine/base/util/files.h"
#include "engine/torch/device/device.h"

namespace tokamak {

// The cache's keys name the LibTorch version the build was configured with (the core has no LibTorch header to
// ask); it must be the one these measurements run on.
static_assert(std::string_view(TORCH_VERSION) == std::string_view(TOKAMAK_TORCH_VERSION),
              "engine/CMakeLists.txt's Torch_VERSION differs from the LibTorch headers' TORCH_VERSION");

namespace {

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GemmRate measure_cpu_gemm_flops(const std::string& precision, int max_size, int repeats) {
  const auto dtype = precision.rfind("bf16", 0) == 0 ? at::kBFloat16 : at::kFloat;
  // Random operands: zeros can run faster than real data and would overstate the peak. From a generator of
  // its own: the run's seeded global one must not move (resumed runs repeat their dropout masks bit for bit).
  at::Generator gen = at::detail::createCPUGenerator(1);
  int size = std::min(kCpuPeakMinSize, max_size);
  at::Tensor a, b, c;
  for (;;) {
    // b transposed, as nn::Linear keeps its weight ([out, in]) and every GEMM of the model reads it: on a CPU
    // without native bf16 the untransposed layout takes a scalar path ~10× slower than the model's (1.2
    // against 12.6 GFLOP/s at 512³ on an AVX2 EPYC), which would put MFU above 100%.
    a = at::randn({size, size}, gen).to(dtype), b = at::randn({size, size}, gen).to(dtype).t();
    c = at::mm(a, b);  // warm-up: threads started, packing buffers allocated
    const double once = seconds_of([&] { at::mm_out(c, a, b); });
    if (size * 2 > max_size || once >= kCpuPeakProductSeconds) break;
    size *= 2;
  }
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) best = std::min(best, seconds_of([&] { at::mm_out(c, a, b); }));
  return {2.0 * size * size * static_cast<double>(size) / best, size};
}

CpuPeak cpu_peak_flops(const std::string& precision) {
  using nlohmann::json;
  const std::string p = precision.rfind("bf16", 0) == 0 ? "bf16" : "fp32";  // bf16-pure too
  const int threads = at::get_num_threads();
  const std::string key = cpu_peak_key(p, threads);
  const std::string path = cpu_peak_cache_path();
  // Measured at every start and the highest rate kept: one measurement taken while other work shared the
  // cores (a build, a second run) would otherwise understate the peak, and overstate MFU, for good. A few
  // tenths of a second per run (the sizing keeps it so where bf16 has no native instructions).
  const GemmRate rate = measure_cpu_gemm_flops(p);
  const std::string what = std::to_string(rate.size) + "³ " + p + " GEMM, " + std::to_string(threads) +
                           (threads == 1 ? " thread" : " threads");
  CpuPeak peak{rate.flops, "measured: " + what};
  // Read, compare and write under the cache's lock: runs starting together each keep their entry.
  try {
    make_dirs(cache_dir());
  } catch (const std::exception&) {
    // no cache folder: the lock below runs unlocked and the write fails quietly
  }
  with_file_lock(path + ".lock", [&] {
    json cache = json::object();
    try {
      cache = json::parse(read_file(path));
      if (!cache.is_object()) cache = json::object();
    } catch (const std::exception&) {
      cache = json::object();  // none yet, or unreadable: a new one
    }
    if (cache.contains(key) && cache[key].is_number() && cache[key].get<double>() > peak.flops) {
      peak = {cache[key].get<double>(), "best measured on this machine: " + what};
      return;
    }
    cache[key] = peak.flops;
    try {
      write_file_atomically(path, cache.dump(1));
    } catch (const std::exception&) {
      // A read-only cache only costs the measurement again next time.
    }
  });
  return peak;
}

std::optional<CpuPeak> cached_cpu_peak(const std::string& precision) {
  return cached_cpu_peak(precision, at::get_num_threads());
}

}  // namespace tokamak
