// Setting up the machine for a run: threads and the CPU allocator. The device queries (names, memory,
// synchronize) are in engine/metrics/device.h, included here because every caller of configure_cpu also
// picks a device.
#pragma once
#include <cstdint>

#include "engine/metrics/device.h"

namespace tokamak {

// Sets LibTorch's intra-op threads (0 = all cores) and keeps freed memory in the process (see device.cpp);
// returns the number of threads in use.
int configure_cpu(int64_t threads);

}  // namespace tokamak
