// What every CUDA kernel lab (experiments/kernels/*_lab.cu) shares: a CUDA call that fails ends the lab with the
// call and CUDA's reason, bf16 read back on the host, and the check against the CPU reference, whose tolerance
// scales with the reference (|got - ref| <= atol + rtol·|ref|, rtol by the output's dtype).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define LAB_CHECK(call)                                                               \
  do {                                                                                \
    const cudaError_t e_ = (call);                                                    \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s: %s: %s\n", lab::name, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

namespace lab {

extern const char* name;  // the lab's, for its error lines

inline float bf16_to_float(__nv_bfloat16 v) {
  uint16_t bits;
  std::memcpy(&bits, &v, 2);
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

// The worst error of a version's outputs as a fraction of their tolerance: <= 1 passes.
struct Check {
  double worst = 0;
  void add(double got, double ref, double atol, double rtol) {
    const double err = std::fabs(got - ref) / (atol + rtol * std::fabs(ref));
    worst = std::max(worst, std::isfinite(got) ? err : INFINITY);
  }
  bool ok() const { return worst <= 1.0; }
};

// The best of `rounds` timings of run() in ms, each between two CUDA events on the default stream.
template <class Run>
float best_ms(int rounds, Run&& run) {
  cudaEvent_t start, stop;
  LAB_CHECK(cudaEventCreate(&start));
  LAB_CHECK(cudaEventCreate(&stop));
  float best = INFINITY;
  for (int r = 0; r < rounds; ++r) {
    LAB_CHECK(cudaEventRecord(start));
    run();
    LAB_CHECK(cudaEventRecord(stop));
    LAB_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    LAB_CHECK(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  LAB_CHECK(cudaEventDestroy(start));
  LAB_CHECK(cudaEventDestroy(stop));
  return best;
}

// Without a GPU a lab has nothing to time: it says so and the caller exits 0 (the kit's rehearsal on a CPU).
inline bool no_gpu() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return false;
  std::printf("%s: no CUDA device here: nothing to time (run it from the GPU kit)\n", name);
  return true;
}

}  // namespace lab
