// Device helpers shared by engine/torch/kernels/*.cu: element loads and stores in fp32 arithmetic, warp sums.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace tokamak::kernels::cuda {

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffff, v, offset);
  return v;
}

}  // namespace tokamak::kernels::cuda
