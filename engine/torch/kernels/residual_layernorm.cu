// Fused residual add + LayerNorm on CUDA (llm.c's fused_residual_forward and layernorm_backward): one warp per
// row. Forward writes the new residual stream h = x + residual and y = layer_norm(h) in one kernel, reading x
// and residual once instead of add, then layer_norm reading h again. Backward accumulates into dh (the residual
// stream's gradient, which flows on to x and residual unchanged) and sums dweight/dbias per block in shared
// memory before one atomic add per column.
#include "engine/torch/kernels/common.cuh"
#include "engine/torch/kernels/cuda_launch.h"

namespace tokamak::kernels::cuda {
namespace {

constexpr int kWarps = 8;  // rows per block

template <class T>
__global__ void residual_layernorm_forward_kernel(const T* x, const T* residual, const T* weight, const T* bias, T* h,
                                                  T* y, float* mean, float* rstd, int64_t N, int64_t C) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const T *xr = x + row * C, *rr = residual + row * C;
  T *hr = h + row * C, *yr = y + row * C;
  float sum = 0.f;
  for (int64_t i = lane; i < C; i += 32) {
    const T v = from_float<T>(to_float(xr[i]) + to_float(rr[i]));
    hr[i] = v;
    sum += to_float(v);  // statistics of h as stored, the tensor backward sees
  }
  const float m = warp_sum(sum) / C;
  float sq = 0.f;
  for (int64_t i = lane; i < C; i += 32) {
    const float d = to_float(hr[i]) - m;
    sq += d * d;
  }
  const float s = rsqrtf(warp_sum(sq) / C + 1e-5f);
  for (int64_t i = lane; i < C; i += 32)
    yr[i] = from_float<T>((to_float(hr[i]) - m) * s * to_float(weight[i]) + to_float(bias[i]));
  if (lane == 0) mean[row] = m, rstd[row] = s;
}

template <class T>
__global__ void layernorm_backward_kernel(const T* dy, const T* h, const T* weight, const float* mean,
                                          const float* rstd, T* dh, float* dweight, float* dbias, int64_t N,
                                          int64_t C) {
  extern __shared__ float shared[];  // dweight then dbias partial sums, (C,) each
  float *sw = shared, *sb = shared + C;
  for (int64_t i = threadIdx.x; i < 2 * C; i += blockDim.x) shared[i] = 0.f;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < N;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    const T *dyr = dy + row * C, *hr = h + row * C;
    T* dhr = dh + row * C;
    const float m = mean[row], s = rstd[row];
    float a = 0.f, b = 0.f;  // sums of dy·w and dy·w·norm
    for (int64_t i = lane; i < C; i += 32) {
      const float g = to_float(dyr[i]) * to_float(weight[i]);
      a += g;
      b += g * (to_float(hr[i]) - m) * s;
    }
    a = warp_sum(a) / C;
    b = warp_sum(b) / C;
    for (int64_t i = lane; i < C; i += 32) {
      const float norm = (to_float(hr[i]) - m) * s, d = to_float(dyr[i]);
      dhr[i] = from_float<T>(to_float(dhr[i]) + (d * to_float(weight[i]) - a - norm * b) * s);
      atomicAdd(&sw[i], d * norm);
      atomicAdd(&sb[i], d);
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < C; i += blockDim.x) {
    atomicAdd(&dweight[i], sw[i]);
    atomicAdd(&dbias[i], sb[i]);
  }
}

// speed.fused_glue: the dtypes a block has under bf16 autocast, with no casts around the kernel. x (the residual
// stream) fp32, the branch bf16; h fp32 and y bf16 (the next matmul's input). One warp a row, lane l owning packs
// l, l + 32, ... of 8 elements held in registers (16-byte loads and stores): C a multiple of 8, at most
// kMixedMaxC. Lab: experiments/kernels/residual_layernorm_lab.cu (v2).
constexpr int kMixedPacks = kMixedMaxC / 256;
__global__ void residual_layernorm_forward_mixed_kernel(const float* x, const __nv_bfloat16* branch,
                                                        const float* weight, const float* bias, float* h,
                                                        __nv_bfloat16* y, float* mean, float* rstd, int64_t N,
                                                        int64_t C) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= N) return;
  const int64_t packs = C / 8;
  float v[kMixedPacks][8];
  float sum = 0.f;
#pragma unroll
  for (int p = 0; p < kMixedPacks; ++p) {
    const int64_t pack = lane + 32 * p;
    if (pack >= packs) break;
    const int64_t at = row * C + pack * 8;
    const float4 x0 = *reinterpret_cast<const float4*>(x + at), x1 = *reinterpret_cast<const float4*>(x + at + 4);
    const float xs[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
    if (branch) {
      const uint4 bv = *reinterpret_cast<const uint4*>(branch + at);
      const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&bv);
#pragma unroll
      for (int k = 0; k < 8; ++k) v[p][k] = xs[k] + __bfloat162float(b[k]), sum += v[p][k];
    } else {
#pragma unroll
      for (int k = 0; k < 8; ++k) v[p][k] = xs[k], sum += v[p][k];
    }
    if (h) {
      *reinterpret_cast<float4*>(h + at) = make_float4(v[p][0], v[p][1], v[p][2], v[p][3]);
      *reinterpret_cast<float4*>(h + at + 4) = make_float4(v[p][4], v[p][5], v[p][6], v[p][7]);
    }
  }
  const float m = warp_sum(sum) / C;
  float sq = 0.f;
#pragma unroll
  for (int p = 0; p < kMixedPacks; ++p) {
    if (lane + 32 * p >= packs) break;
#pragma unroll
    for (int k = 0; k < 8; ++k) sq += (v[p][k] - m) * (v[p][k] - m);
  }
  const float s = rsqrtf(warp_sum(sq) / C + 1e-5f);
#pragma unroll
  for (int p = 0; p < kMixedPacks; ++p) {
    const int64_t pack = lane + 32 * p;
    if (pack >= packs) break;
    uint4 out;
    __nv_bfloat16* o = reinterpret_cast<__nv_bfloat16*>(&out);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int64_t c = pack * 8 + k;
      o[k] = __float2bfloat16((v[p][k] - m) * s * weight[c] + bias[c]);
    }
    *reinterpret_cast<uint4*>(y + row * C + pack * 8) = out;
  }
  if (lane == 0) mean[row] = m, rstd[row] = s;
}

// Its backward, out of place: dh_out = dh_in (the residual stream's own gradient, fp32; null: none) + layer_norm's
// input gradient for dy (bf16), and the branch's gradient, the same values in bf16, written in the same pass (no
// cast after it). dweight and dbias (C,) fp32 get the row sums added (zero them first). An element a lane, two
// shared-memory atomics an element and row: the widths the packed kernel below does not take, and its lab's v1.
__global__ void layernorm_backward_mixed_kernel(const __nv_bfloat16* dy, const float* h, const float* weight,
                                                const float* mean, const float* rstd, const float* dh_in, float* dh_out,
                                                __nv_bfloat16* dbranch, float* dweight, float* dbias, int64_t N,
                                                int64_t C) {
  extern __shared__ float shared[];  // dweight then dbias partial sums, (C,) each
  float *sw = shared, *sb = shared + C;
  for (int64_t i = threadIdx.x; i < 2 * C; i += blockDim.x) shared[i] = 0.f;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < N;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    const __nv_bfloat16* dyr = dy + row * C;
    const float* hr = h + row * C;
    const float m = mean[row], s = rstd[row];
    float a = 0.f, b = 0.f;  // sums of dy·w and dy·w·norm
    for (int64_t i = lane; i < C; i += 32) {
      const float g = __bfloat162float(dyr[i]) * weight[i];
      a += g;
      b += g * (hr[i] - m) * s;
    }
    a = warp_sum(a) / C;
    b = warp_sum(b) / C;
    for (int64_t i = lane; i < C; i += 32) {
      const float norm = (hr[i] - m) * s, d = __bfloat162float(dyr[i]);
      const float g = (dh_in ? dh_in[row * C + i] : 0.f) + (d * weight[i] - a - norm * b) * s;
      dh_out[row * C + i] = g;
      if (dbranch) dbranch[row * C + i] = __float2bfloat16(g);
      atomicAdd(&sw[i], d * norm);
      atomicAdd(&sb[i], d);
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < C; i += blockDim.x) {
    atomicAdd(&dweight[i], sw[i]);
    atomicAdd(&dbias[i], sb[i]);
  }
}

// The same, packed as the forward: one warp a row, lane l owning packs l, l + 32, ... of 8 elements (16-byte loads
// and stores), and the lane's dweight and dbias sums kept in registers over all the rows its warp takes, so shared
// memory sees one atomic an element per warp, not per row. The second pass reads dy, h and the weight again rather
// than holding the row in registers: the row (6 bytes an element) is still in L1, and the registers it would take
// halve the warps an SM can keep in flight; two blocks an SM at every width it takes (ptxas for sm_90: 114 registers
// at GPT-2's 768, 128 at 1,280). kPacks = packs a lane (C / 256 rounded up); up to kMaxRegisterPacks.
// Lab: experiments/kernels/layernorm_backward_lab.cu (v2; the element-a-lane kernel above is v1).
constexpr int kMaxRegisterPacks = 5;  // C up to 1,280: GPT-2 small, medium and large
struct Pack {                         // 8 elements of a row, in fp32
  float v[8];
};
__device__ __forceinline__ Pack load_bf16_pack(const __nv_bfloat16* p) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat16* b = reinterpret_cast<const __nv_bfloat16*>(&raw);
  Pack out;
#pragma unroll
  for (int k = 0; k < 8; ++k) out.v[k] = __bfloat162float(b[k]);
  return out;
}
__device__ __forceinline__ Pack load_float_pack(const float* p) {
  const float4 a = *reinterpret_cast<const float4*>(p), b = *reinterpret_cast<const float4*>(p + 4);
  return Pack{{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}
template <int kPacks>
__global__ void __launch_bounds__(kWarps * 32, 2)
    layernorm_backward_mixed_packed_kernel(const __nv_bfloat16* dy, const float* h, const float* weight,
                                           const float* mean, const float* rstd, const float* dh_in, float* dh_out,
                                           __nv_bfloat16* dbranch, float* dweight, float* dbias, int64_t N, int64_t C) {
  extern __shared__ float shared[];  // dweight then dbias partial sums, (C,) each
  float *sw = shared, *sb = shared + C;
  for (int64_t i = threadIdx.x; i < 2 * C; i += blockDim.x) shared[i] = 0.f;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const int64_t packs = C / 8;
  float sum_w[kPacks][8] = {}, sum_b[kPacks][8] = {};
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; row < N;
       row += static_cast<int64_t>(gridDim.x) * kWarps) {
    const float m = mean[row], s = rstd[row];
    float a = 0.f, b = 0.f;  // sums of dy·w and dy·w·norm
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int64_t pack = lane + 32 * p;
      if (pack >= packs) break;
      const int64_t at = row * C + pack * 8;
      const Pack d = load_bf16_pack(dy + at), x = load_float_pack(h + at), w = load_float_pack(weight + pack * 8);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float g = d.v[k] * w.v[k];
        a += g;
        b += g * (x.v[k] - m) * s;
      }
    }
    a = warp_sum(a) / C;
    b = warp_sum(b) / C;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int64_t pack = lane + 32 * p;
      if (pack >= packs) break;
      const int64_t at = row * C + pack * 8;
      const Pack d = load_bf16_pack(dy + at), x = load_float_pack(h + at), w = load_float_pack(weight + pack * 8);
      const Pack in = dh_in ? load_float_pack(dh_in + at) : Pack{};
      Pack g;
      uint4 out;
      __nv_bfloat16* ob = reinterpret_cast<__nv_bfloat16*>(&out);
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const float norm = (x.v[k] - m) * s;
        g.v[k] = in.v[k] + (d.v[k] * w.v[k] - a - norm * b) * s;
        ob[k] = __float2bfloat16(g.v[k]);
        sum_w[p][k] += d.v[k] * norm;
        sum_b[p][k] += d.v[k];
      }
      *reinterpret_cast<float4*>(dh_out + at) = make_float4(g.v[0], g.v[1], g.v[2], g.v[3]);
      *reinterpret_cast<float4*>(dh_out + at + 4) = make_float4(g.v[4], g.v[5], g.v[6], g.v[7]);
      if (dbranch) *reinterpret_cast<uint4*>(dbranch + at) = out;
    }
  }
#pragma unroll
  for (int p = 0; p < kPacks; ++p) {
    const int64_t pack = lane + 32 * p;
    if (pack >= packs) break;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      atomicAdd(&sw[pack * 8 + k], sum_w[p][k]);
      atomicAdd(&sb[pack * 8 + k], sum_b[p][k]);
    }
  }
  __syncthreads();
  for (int64_t i = threadIdx.x; i < C; i += blockDim.x) {
    atomicAdd(&dweight[i], sw[i]);
    atomicAdd(&dbias[i], sb[i]);
  }
}

int blocks_for(int64_t N) { return static_cast<int>((N + kWarps - 1) / kWarps); }

}  // namespace

void residual_layernorm_forward(DType dtype, const void* x, const void* residual, const void* weight, const void* bias,
                                void* h, void* y, float* mean, float* rstd, int64_t N, int64_t C, cudaStream_t stream) {
  if (N == 0) return;
  if (dtype == DType::kBFloat16) {
    using T = __nv_bfloat16;
    residual_layernorm_forward_kernel<<<blocks_for(N), kWarps * 32, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(residual), static_cast<const T*>(weight),
        static_cast<const T*>(bias), static_cast<T*>(h), static_cast<T*>(y), mean, rstd, N, C);
  } else {
    residual_layernorm_forward_kernel<<<blocks_for(N), kWarps * 32, 0, stream>>>(
        static_cast<const float*>(x), static_cast<const float*>(residual), static_cast<const float*>(weight),
        static_cast<const float*>(bias), static_cast<float*>(h), static_cast<float*>(y), mean, rstd, N, C);
  }
}

void layernorm_backward(DType dtype, const void* dy, const void* h, const void* weight, const float* mean,
                        const float* rstd, void* dh, float* dweight, float* dbias, int64_t N, int64_t C,
                        cudaStream_t stream) {
  if (N == 0) return;
  // Enough blocks to fill the GPU, few enough that the per-block column sums stay cheap.
  const int blocks = blocks_for(N) < 1024 ? blocks_for(N) : 1024;
  const size_t shared = 2 * C * sizeof(float);
  if (dtype == DType::kBFloat16) {
    using T = __nv_bfloat16;
    layernorm_backward_kernel<<<blocks, kWarps * 32, shared, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(h), static_cast<const T*>(weight), mean, rstd,
        static_cast<T*>(dh), dweight, dbias, N, C);
  } else {
    layernorm_backward_kernel<<<blocks, kWarps * 32, shared, stream>>>(
        static_cast<const float*>(dy), static_cast<const float*>(h), static_cast<const float*>(weight), mean, rstd,
        static_cast<float*>(dh), dweight, dbias, N, C);
  }
}

void residual_layernorm_forward_mixed(const float* x, const void* branch, const float* weight, const float* bias,
                                      float* h, void* y, float* mean, float* rstd, int64_t N, int64_t C,
                                      cudaStream_t stream) {
  if (N == 0) return;
  residual_layernorm_forward_mixed_kernel<<<blocks_for(N), kWarps * 32, 0, stream>>>(
      x, static_cast<const __nv_bfloat16*>(branch), weight, bias, h, static_cast<__nv_bfloat16*>(y), mean, rstd, N, C);
}

void layernorm_backward_mixed(const void* dy, const float* h, const float* weight, const float* mean, const float* rstd,
                              const float* dh_in, float* dh_out, void* dbranch, float* dweight, float* dbias, int64_t N,
                              int64_t C, cudaStream_t stream) {
  if (N == 0) return;
  const int blocks = blocks_for(N) < 1024 ? blocks_for(N) : 1024;
  const size_t shared = 2 * C * sizeof(float);
  const auto* dyb = static_cast<const __nv_bfloat16*>(dy);
  auto* dbr = static_cast<__nv_bfloat16*>(dbranch);
  const int packs = static_cast<int>((C / 8 + 31) / 32);  // packs a lane
  // 16-byte moves need 16-byte addresses; a tensor that starts elsewhere takes the element-a-lane kernel.
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool packed = C % 8 == 0 && aligned(dy) && aligned(h) && aligned(weight) && aligned(dh_in) && aligned(dh_out) &&
                      aligned(dbranch);
#define TOKAMAK_LN_BACKWARD_PACKED(P)                                                   \
  case P:                                                                               \
    layernorm_backward_mixed_packed_kernel<P><<<blocks, kWarps * 32, shared, stream>>>( \
        dyb, h, weight, mean, rstd, dh_in, dh_out, dbr, dweight, dbias, N, C);          \
    return;
  switch (packed ? packs : 0) {
    TOKAMAK_LN_BACKWARD_PACKED(1)
    TOKAMAK_LN_BACKWARD_PACKED(2)
    TOKAMAK_LN_BACKWARD_PACKED(3)
    TOKAMAK_LN_BACKWARD_PACKED(4)
    TOKAMAK_LN_BACKWARD_PACKED(5)
    default:
      break;
  }
#undef TOKAMAK_LN_BACKWARD_PACKED
  static_assert(kMaxRegisterPacks == 5, "the cases above cover 1 .. kMaxRegisterPacks");
  layernorm_backward_mixed_kernel<<<blocks, kWarps * 32, shared, stream>>>(dyb, h, weight, mean, rstd, dh_in, dh_out,
                                                                           dbr, dweight, dbias, N, C);
}

}  // namespace tokamak::kernels::cuda
