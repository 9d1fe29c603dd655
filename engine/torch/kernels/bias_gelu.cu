// The MLP's GELU backward fused with its bias gradient on CUDA: one pass over the (N, 4C) activations turns
// the incoming gradient into the pre-activation's in place and sums its columns (the bias gradient), where
// the native path runs gelu_backward and then reads the result again to reduce it. The forward is
// at::_addmm_activation (cuBLASLt's bias + GELU epilogue) at inference and addmm + gelu in training, whose
// pre-activation backward needs (engine/torch/kernels/bias_gelu.cpp).
#include "engine/torch/kernels/common.cuh"
#include "engine/torch/kernels/cuda_launch.h"

namespace tokamak::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = 32;

__device__ __forceinline__ float gelu_tanh_grad(float x) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;  // sqrt(2 / pi), GPT-2's cubic coefficient
  const float t = tanhf(k0 * (x + k1 * x * x * x));
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k0 * (1.f + 3.f * k1 * x * x);
}

// Each thread owns columns threadIdx.x, +kThreads, ... of the block's rows, so its column sums need no
// atomics until the one per column and block at the end.
template <class T>
__global__ void gelu_backward_bias_kernel(T* d, const T* pre, float* dbias, int64_t N, int64_t C) {
  extern __shared__ float sums[];  // (C,)
  for (int64_t c = threadIdx.x; c < C; c += kThreads) sums[c] = 0.f;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock;
  const int64_t last = first + kRowsPerBlock < N ? first + kRowsPerBlock : N;
  for (int64_t r = first; r < last; ++r)
    for (int64_t c = threadIdx.x; c < C; c += kThreads) {
      const float g = to_float(d[r * C + c]) * gelu_tanh_grad(to_float(pre[r * C + c]));
      d[r * C + c] = from_float<T>(g);
      sums[c] += g;
    }
  for (int64_t c = threadIdx.x; c < C; c += kThreads) atomicAdd(&dbias[c], sums[c]);
}

// speed.fused_glue, out of place (no clone of the incoming gradient first): out = d · gelu_tanh'(pre) in bf16, 16-byte
// loads and stores (8 elements a thread), each block a strip of kOutRows rows whose column sums stay in registers,
// one atomicAdd per column and block. C a multiple of 8. Lab: experiments/kernels/bias_gelu_lab.cu (v2).
constexpr int kOutThreads = 128, kOutRows = 64;
__global__ void gelu_backward_bias_out_kernel(const __nv_bfloat16* d, const __nv_bfloat16* pre, __nv_bfloat16* out,
                                              float* dbias, int64_t N, int64_t C) {
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kOutRows;
  const int64_t last = first + kOutRows < N ? first + kOutRows : N;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * kOutThreads + threadIdx.x) * 8;
  if (c0 >= C) return;
  float sums[8] = {};
  for (int64_t r = first; r < last; ++r) {
    const int64_t at = r * C + c0;
    const uint4 dv = *reinterpret_cast<const uint4*>(d + at), pv = *reinterpret_cast<const uint4*>(pre + at);
    const __nv_bfloat16* db = reinterpret_cast<const __nv_bfloat16*>(&dv);
    const __nv_bfloat16* pb = reinterpret_cast<const __nv_bfloat16*>(&pv);
    uint4 ov;
    __nv_bfloat16* ob = reinterpret_cast<__nv_bfloat16*>(&ov);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float g = __bfloat162float(db[k]) * gelu_tanh_grad(__bfloat162float(pb[k]));
      ob[k] = __float2bfloat16(g);
      sums[k] += g;
    }
    *reinterpret_cast<uint4*>(out + at) = ov;
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) atomicAdd(&dbias[c0 + k], sums[k]);
}

}  // namespace

void gelu_backward_bias(DType dtype, void* d, const void* pre, float* dbias, int64_t N, int64_t C,
                        cudaStream_t stream) {
  if (N == 0) return;
  const int blocks = static_cast<int>((N + kRowsPerBlock - 1) / kRowsPerBlock);
  const size_t shared = C * sizeof(float);
  if (dtype == DType::kBFloat16)
    gelu_backward_bias_kernel<<<blocks, kThreads, shared, stream>>>(
        static_cast<__nv_bfloat16*>(d), static_cast<const __nv_bfloat16*>(pre), dbias, N, C);
  else
    gelu_backward_bias_kernel<<<blocks, kThreads, shared, stream>>>(static_cast<float*>(d),
                                                                    static_cast<const float*>(pre), dbias, N, C);
}

void gelu_backward_bias_out(const void* d, const void* pre, void* out, float* dbias, int64_t N, int64_t C,
                            cudaStream_t stream) {
  if (N == 0) return;
  const dim3 grid(static_cast<unsigned>((C / 8 + kOutThreads - 1) / kOutThreads),
                  static_cast<unsigned>((N + kOutRows - 1) / kOutRows));
  gelu_backward_bias_out_kernel<<<grid, kOutThreads, 0, stream>>>(static_cast<const __nv_bfloat16*>(d),
                                                                  static_cast<const __nv_bfloat16*>(pre),
                                                                  static_cast<__nv_bfloat16*>(out), dbias, N, C);
}

}  // namespace tokamak::kernels::cuda
