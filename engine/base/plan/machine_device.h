// This machine as a device of the plan: its own limits (the GEMM rate per precision, the memory copy rate), its
// physical memory, no price. Assembled here from limits however they were found; engine/torch/plan/this_machine.h
// measures what is not cached yet (LibTorch), and the studio reads the caches alone.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "engine/base/machine/limits_cache.h"
#include "engine/base/plan/device_catalog.h"

namespace tokamak {

// THREADS: those the limits were measured at. BF16: the bf16 GEMM rate, given where PRECISION (what `auto` runs
// here) is bf16.
CatalogDevice this_machine_entry(int threads, const CpuPeak& fp32, const std::optional<CpuPeak>& bf16,
                                 const MemoryBandwidth& bandwidth, Precision precision);

// The same from the caches alone, for a run of THREADS (0 = every core given), without LibTorch; none while a
// limit it needs is not cached yet (a run's start here, or `tokamak-engine plan --device this`, measures them).
// *PRECISION: what `auto` runs here.
std::optional<CatalogDevice> cached_this_machine_device(int64_t threads, Precision* precision);

}  // namespace tokamak
