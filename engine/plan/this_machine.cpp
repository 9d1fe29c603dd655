// This machine's row of the catalog, measured (see this_machine.h).
#include "engine/plan/this_machine.h"

#include "engine/device/cpu_peak.h"
#include "engine/device/cpu_setup.h"
#include "engine/metrics/memory_bandwidth.h"
#include "engine/model/memory_estimate.h"

namespace tokamak {

CatalogDevice this_machine_device(int64_t threads, std::string* precision, bool cached_only) {
  const int used = configure_cpu(threads);
  const auto peak = [&](const char* p) {
    if (cached_only)
      if (const auto cached = cached_cpu_peak(p)) return *cached;
    return cpu_peak_flops(p);
  };
  CatalogDevice d;
  const c10::Device cpu = parse_device("cpu");
  d.name = "this machine (" + device_name(cpu) + ", " + std::to_string(used) + " threads)";
  d.match = {}, d.architecture = "CPU", d.this_machine = true;
  d.memory_bytes = static_cast<double>(device_memory_bytes("cpu"));
  const CpuPeak fp32 = peak("fp32");
  d.flops["fp32"] = fp32.flops;
  d.source = fp32.source;
  *precision = resolved_precision("auto", "cpu");
  if (*precision == "bf16") d.flops["bf16"] = peak("bf16").flops;
  const MemoryBandwidth bw = start_memory_bandwidth(cpu);
  d.memory_bytes_per_s = bw.dram();
  d.source += "; " + bw.source;
  return d;
}

}  // namespace tokamak
