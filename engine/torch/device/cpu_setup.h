// Setting up the machine for a run: threads and the CPU allocator. The device queries (names, memory,
// synchronize) are in engine/torch/device/device.h, included here because every caller of configure_cpu also
// picks a device.
#pragma once
#include <cstdint>

#include "engine/torch/device/device.h"

namespace tokamak {

// Sets LibTorch's intra-op threads (0 = every core this process is given) and keeps freed memory in the process (see cpu_setup.cpp);
// returns the number of threads in use.
int configure_cpu(int64_t threads);

// The training process's jemalloc keeps freed pages for reuse (app/tokamak-engine/malloc_conf.cpp). If what it holds
// beyond the tensors in use (`held`, mem_reserved on a CPU) passes a quarter of physical memory, it gives them
// back to the kernel now; a run whose steps reuse their sizes never gets there. held < 0: give them back
// whatever they are (before measuring a new peak). Returns whether it trimmed.
bool trim_cpu_allocator(int64_t held);

}  // namespace tokamak
