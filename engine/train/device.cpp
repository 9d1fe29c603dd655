// configure_cpu: LibTorch's threads and glibc's allocator set-up for a training process.
#include "engine/train/device.h"

#include <ATen/Parallel.h>
#include <malloc.h>

#include <limits>
#include <thread>

namespace tokamak {

int configure_cpu(int64_t threads) {
  // LibTorch's CPU allocator has no cache: every step frees and re-allocates the same large tensors (the
  // logits alone are B·T·V floats), and glibc serves each with a fresh mmap that the kernel must zero page by
  // page. Keeping freed memory in the heap (no mmap, no trim) made a nano step 2.7× faster on the 2-core dev
  // machine (713 → 269 ms, system time 8.6 → 1.4 s over 8 steps; docs/PERFORMANCE.md).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  mallopt(M_TOP_PAD, 64 << 20);
  int n = threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::thread::hardware_concurrency());
  if (n < 1) n = 1;
  at::set_num_threads(n);
  return at::get_num_threads();
}

}  // namespace tokamak
