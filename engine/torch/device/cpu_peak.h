// The CPU's matmul peak, measured: CPUs have no datasheet row in peak_flops() (the same model differs by
// cores, clocks and instruction sets), so MFU on a CPU divides by what a LibTorch GEMM reached on this
// machine. Measured at each run's start and the best rate per precision and thread count kept in a cache.
#pragma once
#include <optional>
#include <string>

#include "engine/base/machine/limits_cache.h"

namespace tokamak {

// Times square matmuls (kCpuPeakSize³, or smaller where one product is slow) in `precision` ("fp32" or "bf16"; anything
// else counts as fp32) on LibTorch's current thread count; the result is cached in cache_dir()/cpu_peak.json under the
// CPU model, precision, threads and LibTorch version; the higher of this measurement and the cached best is returned
// (and kept), so a measurement taken on a busy machine does not stay the peak.
CpuPeak cpu_peak_flops(const std::string& precision);
// The cached best for `precision` at LibTorch's current thread count, without measuring; none when not cached yet.
std::optional<CpuPeak> cached_cpu_peak(const std::string& precision);
// cpu_bf16_pays(threads), the cache's keys and its reader without LibTorch: engine/base/machine/limits_cache.h.

// The GEMM's largest side: large enough that LibTorch reaches its steady rate, small enough to measure in well
// under a second in fp32 on two cores.
constexpr int kCpuPeakSize = 2048;
// The side the sizing starts from. A CPU without native bf16 (AVX2 only) runs bf16 GEMMs in a scalar fallback
// ~100× slower than fp32: one 2048³ product there takes minutes, so the side doubles from here only while one
// product takes under kCpuPeakProductSeconds.
constexpr int kCpuPeakMinSize = 256;
constexpr double kCpuPeakProductSeconds = 0.05;

struct GemmRate {
  double flops = -1;  // FLOP/s, the best of the timed products
  int size = 0;       // the side it was measured at
};

// The measurement alone, uncached: sizes the product (kCpuPeakMinSize doubling up to max_size while one product
// is quicker than kCpuPeakProductSeconds), then takes the best of `repeats` timed products at that size.
GemmRate measure_cpu_gemm_flops(const std::string& precision, int max_size = kCpuPeakSize, int repeats = 3);

}  // namespace tokamak
