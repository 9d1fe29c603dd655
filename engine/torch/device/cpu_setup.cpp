// configure_cpu: LibTorch's threads and glibc's allocator set-up for a training process.
#include "engine/torch/device/cpu_setup.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <limits>

#include "engine/base/util/cores.h"

namespace tokamak {

int configure_cpu(int64_t threads) {
  // LibTorch's CPU allocator has no cache: every step frees and re-allocates the same large tensors (the
  // logits alone are B·T·V floats), and glibc serves each with a fresh mmap that the kernel must zero page by
  // page (a nano step 2.7× slower; docs/PERFORMANCE.md). tokamak-engine links jemalloc, which keeps freed memory
  // for reuse in every thread alike. glibc's mallopt() cannot do that: its settings hold only in the main
  // arena, and a thread with an arena of its own (an embedder's, a test's) still gets a fresh mmap for every
  // block over 64 MB — a third of the speed (docs/PERFORMANCE.md). So the settings below are only the fallback for a
  // process whose malloc is glibc's after all (jemalloc answers to mallctl; glibc has no such symbol).
  if (!::dlsym(RTLD_DEFAULT, "mallctl")) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
    mallopt(M_TOP_PAD, 64 << 20);
  }
  // All the cores this process is given (taskset, a Slurm job's, a container's cpuset), not the machine's: a run
  // pinned to one core with as many threads as the machine has cores waits on itself.
  int n = threads > 0 ? static_cast<int>(threads) : cores_given();
  if (n < 1) n = 1;
  at::set_num_threads(n);
  return at::get_num_threads();
}

bool trim_cpu_allocator(int64_t held) {
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  static const auto mallctl = reinterpret_cast<Mallctl>(::dlsym(RTLD_DEFAULT, "mallctl"));
  static const int64_t limit = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE) / 4;
  if (held >= 0 && held <= limit) return false;
  if (!mallctl) return held < 0 && ::malloc_trim(0) == 1;                 // glibc, as configure_cpu's fallback keeps it
  return mallctl("arena.4096.purge", nullptr, nullptr, nullptr, 0) == 0;  // 4096: MALLCTL_ARENAS_ALL
}

}  // namespace tokamak
