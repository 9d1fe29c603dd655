// This machine's row of the catalog, measured (see this_machine.h).
#include "engine/torch/plan/this_machine.h"

#include "engine/base/plan/machine_device.h"
#include "engine/torch/device/cpu_peak.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/metrics/memory_bandwidth.h"

namespace tokamak {

CatalogDevice this_machine_device(int64_t threads, Precision* precision, bool cached_only) {
  const int used = configure_cpu(threads);
  const auto peak = [&](const char* p) {
    if (cached_only)
      if (const auto cached = cached_cpu_peak(p)) return *cached;
    return cpu_peak_flops(p);
  };
  *precision = resolved_precision(Precision::kAuto, "cpu");
  const CpuPeak fp32 = peak("fp32");
  const std::optional<CpuPeak> bf16 = *precision == Precision::kBf16 ? std::optional<CpuPeak>(peak("bf16")) : std::nullopt;
  return this_machine_entry(used, fp32, bf16, start_memory_bandwidth(parse_device("cpu")), *precision);
}

}  // namespace tokamak
