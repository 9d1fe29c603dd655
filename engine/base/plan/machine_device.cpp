// See machine_device.h.
#include "engine/base/plan/machine_device.h"

#include "engine/base/machine/cpu_info.h"
#include "engine/base/machine/precision_here.h"
#include "engine/base/util/cores.h"

namespace tokamak {

CatalogDevice this_machine_entry(int threads, const CpuPeak& fp32, const std::optional<CpuPeak>& bf16,
                                 const MemoryBandwidth& bandwidth, Precision precision) {
  CatalogDevice d;
  d.name = "this machine (" + cpu_model() + ", " + std::to_string(threads) + " threads)";
  d.match = {}, d.architecture = "CPU", d.this_machine = true;
  d.memory_bytes = static_cast<double>(physical_memory_bytes());
  d.flops["fp32"] = fp32.flops;
  d.source = fp32.source;
  if (precision == Precision::kBf16 && bf16) d.flops["bf16"] = bf16->flops;
  d.memory_bytes_per_s = bandwidth.dram();
  d.source += "; " + bandwidth.source;
  return d;
}

std::optional<CatalogDevice> cached_this_machine_device(int64_t threads, Precision* precision) {
  // As configure_cpu (engine/torch/device/cpu_setup.h) sets a run's threads.
  const int used = threads > 0 ? static_cast<int>(threads) : std::max(1, cores_given());
  *precision = cpu_precision_here(used);
  const std::optional<CpuPeak> fp32 = cached_cpu_peak("fp32", used);
  const std::optional<CpuPeak> bf16 = *precision == Precision::kBf16 ? cached_cpu_peak("bf16", used) : std::nullopt;
  const std::optional<MemoryBandwidth> bandwidth = cached_memory_bandwidth(cpu_model(), used);
  if (!fp32 || (*precision == Precision::kBf16 && !bf16) || !bandwidth) return std::nullopt;
  return this_machine_entry(used, *fp32, bf16, *bandwidth, *precision);
}

}  // namespace tokamak
