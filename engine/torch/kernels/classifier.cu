// The fused classifier's CUDA kernel (llm.c's fused_classifier): one block per row of a chunk's logits. It finds
// the row's max and sum of exponentials (online softmax) and overwrites the row with dlogits in the logits' own
// dtype (bf16 under autocast), so the loss's gradient costs no extra buffer. The logits come from cuBLAS and the
// two gradient matmuls follow it (engine/torch/kernels/classifier_cuda.cpp). Three versions, the first that fits:
//   cached    16-byte packs, the row read once and kept in shared memory for the gradient: one read and one
//             write of the row. GPT-2's bf16 row (50,304 × 2 bytes = 98 KiB) fits in a Hopper SM's twice.
//   packed    16-byte packs, the row read twice (once for the softmax, once for the gradient).
//   scalar    an element at a time, for rows whose length or start allows no packs.
#include <cmath>
#include <cstdint>

#include "engine/torch/kernels/common.cuh"
#include "engine/torch/kernels/cuda_launch.h"

namespace tokamak::kernels::cuda {
namespace {

constexpr int kThreads = 512;
constexpr int64_t kIgnore = -100;

struct MaxSum {
  float m, s;  // running max, and the sum of exp(v - m) over the values seen
};

__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  const float m = fmaxf(a.m, b.m);
  return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

template <int Threads = kThreads>
__device__ MaxSum block_max_sum(MaxSum v) {
  __shared__ MaxSum warps[Threads / 32];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = combine(v, {__shfl_xor_sync(0xffffffff, v.m, offset), __shfl_xor_sync(0xffffffff, v.s, offset)});
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  MaxSum all{-INFINITY, 0.f};
  for (int w = 0; w < Threads / 32; ++w) all = combine(all, warps[w]);  // every thread, same order
  return all;
}

template <class T>
__global__ void softmax_ce_grad_kernel(T* logits, int64_t V, int64_t Vp, const int64_t* targets, float* losses,
                                       const float* n_valid, bool with_grad) {
  T* row = logits + blockIdx.x * Vp;
  const int64_t target = targets[blockIdx.x];
  MaxSum acc{-INFINITY, 0.f};
  for (int64_t i = threadIdx.x; i < V; i += kThreads) acc = combine(acc, {to_float(row[i]), 1.f});
  acc = block_max_sum(acc);
  const float lse = acc.m + logf(acc.s);
  const bool ignored = target == kIgnore;
  // A target outside the vocabulary cannot be refused without a host sync: its loss is NaN, which the
  // trainer's non-finite check stops at (the CPU kernel throws instead).
  const bool bad = !ignored && (target < 0 || target >= V);
  const float target_logit = ignored || bad ? 0.f : to_float(row[target]);
  if (threadIdx.x == 0) losses[blockIdx.x] = ignored ? 0.f : bad ? NAN : lse - target_logit;
  if (!with_grad) return;
  __syncthreads();  // every thread has read row[target] before any overwrites it
  const float scale = 1.f / *n_valid;
  for (int64_t i = threadIdx.x; i < Vp; i += kThreads) {
    float g = 0.f;
    if (!ignored && !bad && i < V) g = (__expf(to_float(row[i]) - lse) - (i == target ? 1.f : 0.f)) * scale;
    row[i] = from_float<T>(g);
  }
}

// The same with 16-byte loads and stores (8 bf16 or 4 fp32 a thread at a time), for rows whose padded length
// and start allow them (GPT-2's 50,304 does): the scalar kernel above moved 2 bytes a load and paid two
// exponentials an element in its running combine, and ran at a tenth of the memory bandwidth on an H200
// (docs/PERFORMANCE.md). Here each pack updates the running (max, sum) once: one exponential an element.
template <class T>
struct alignas(16) Pack {
  T v[16 / sizeof(T)];
};

// Cached: the packed kernel read each row twice, 13.2 GB a GPT-2 step at batch 64 in bf16 beside the gradient's
// 6.6 GB written, at 2.3 TB/s counted as two passes (5.79 ms on an H200). Kept in shared memory (Vp · sizeof(T)
// bytes of it, dynamic) between the softmax and the gradient, the row is read from memory once: a third fewer bytes.
template <class T, bool Cached>
__global__ void softmax_ce_grad_packed_kernel(T* logits, int64_t V, int64_t Vp, const int64_t* targets, float* losses,
                                              const float* n_valid, bool with_grad) {
  constexpr int kPer = 16 / sizeof(T);
  extern __shared__ __align__(16) unsigned char row_cache[];
  Pack<T>* cache = reinterpret_cast<Pack<T>*>(row_cache);
  T* row = logits + blockIdx.x * Vp;
  Pack<T>* packs = reinterpret_cast<Pack<T>*>(row);
  const int64_t n_packs = Vp / kPer;
  const int64_t target = targets[blockIdx.x];
  MaxSum acc{-INFINITY, 0.f};
  for (int64_t p = threadIdx.x; p < n_packs; p += kThreads) {
    const Pack<T> x = packs[p];
    if (Cached) cache[p] = x;  // the same thread reads it back below: no barrier needed for it
    float f[kPer];
    float m = acc.m;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      f[k] = p * kPer + k < V ? to_float(x.v[k]) : -INFINITY;  // the padding's columns are no class
      m = fmaxf(m, f[k]);
    }
    if (m == -INFINITY) continue;  // nothing but padding so far
    float sum = acc.s * __expf(acc.m - m);  // exp(-inf) = 0 on the first pack
#pragma unroll
    for (int k = 0; k < kPer; ++k) sum += __expf(f[k] - m);
    acc = {m, sum};
  }
  acc = block_max_sum(acc);
  const float lse = acc.m + logf(acc.s);
  const bool ignored = target == kIgnore;
  const bool bad = !ignored && (target < 0 || target >= V);  // NaN loss, as in the scalar kernel
  const float target_logit = ignored || bad ? 0.f : to_float(row[target]);
  if (threadIdx.x == 0) losses[blockIdx.x] = ignored ? 0.f : bad ? NAN : lse - target_logit;
  if (!with_grad) return;
  __syncthreads();  // every thread has read row[target] before any overwrites it
  const float scale = 1.f / *n_valid;
  for (int64_t p = threadIdx.x; p < n_packs; p += kThreads) {
    const Pack<T> x = Cached ? cache[p] : packs[p];
    Pack<T> g;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int64_t i = p * kPer + k;
      float v = 0.f;
      if (!ignored && !bad && i < V) v = (__expf(to_float(x.v[k]) - lse) - (i == target ? 1.f : 0.f)) * scale;
      g.v[k] = from_float<T>(v);
    }
    packs[p] = g;
  }
}

// The shared memory a block may have (opted in), per device: asked of the driver once.
int max_block_smem() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return 0;
  return bytes;
}

template <class T>
void launch(T* logits, int64_t rows, int64_t V, int64_t Vp, const int64_t* targets, float* losses,
            const float* n_valid, bool with_grad, cudaStream_t stream) {
  const bool packed = reinterpret_cast<uintptr_t>(logits) % 16 == 0 && Vp % (16 / sizeof(T)) == 0;
  const int64_t row_bytes = Vp * static_cast<int64_t>(sizeof(T));
  // Cached where the row fits: the kernel's dynamic shared memory must be allowed past 48 KiB first (a host call
  // outside any stream, so CUDA graph capture is unaffected).
  if (packed && with_grad && row_bytes <= max_block_smem() &&
      cudaFuncSetAttribute(softmax_ce_grad_packed_kernel<T, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(row_bytes)) == cudaSuccess)
    softmax_ce_grad_packed_kernel<T, true><<<rows, kThreads, row_bytes, stream>>>(logits, V, Vp, targets, losses,
                                                                                   n_valid, with_grad);
  else if (packed)
    softmax_ce_grad_packed_kernel<T, false><<<rows, kThreads, 0, stream>>>(logits, V, Vp, targets, losses, n_valid,
                                                                            with_grad);
  else
    softmax_ce_grad_kernel<<<rows, kThreads, 0, stream>>>(logits, V, Vp, targets, losses, n_valid, with_grad);
}

}  // namespace

void softmax_ce_grad(DType dtype, void* logits, int64_t rows, int64_t V, int64_t Vp, const int64_t* targets,
                     float* losses, const float* n_valid, bool with_grad, cudaStream_t stream) {
  if (rows == 0) return;
  if (dtype == DType::kBFloat16)
    launch(static_cast<__nv_bfloat16*>(logits), rows, V, Vp, targets, losses, n_valid, with_grad, stream);
  else
    launch(static_cast<float*>(logits), rows, V, Vp, targets, losses, n_valid, with_grad, stream);
}

}  // namespace tokamak::kernels::cuda
