// This machine as a device of the plan: its own limits, measured as every run's start states them (the GEMM
// rate per precision, cpu_peak.h; the memory copy rate, memory_bandwidth.h), its physical memory, no price.
#pragma once
#include <cstdint>
#include <string>

#include "engine/base/plan/device_catalog.h"

namespace tokamak {

// With LibTorch's threads set as a run of THREADS would (0 = every core). *PRECISION: what `auto` runs here.
// CACHED_ONLY: the GEMM rates a run's start already measured (cpu_peak.json), measured only where none is cached.
CatalogDevice this_machine_device(int64_t threads, Precision* precision, bool cached_only = false);

}  // namespace tokamak
