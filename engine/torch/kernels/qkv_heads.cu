// The attention heads' gradients back into c_attn's output layout (see qkv_heads.h). A pure copy, so it works on
// bytes: each thread moves 16 of them, the output in order (coalesced stores), the input a row of D elements at a
// time, which is contiguous in the heads' layout as well (coalesced loads).
#include <algorithm>

#include "engine/torch/kernels/cuda_launch.h"

namespace tokamak::kernels::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void heads_to_qkv_kernel(HeadSources src, uint4* dqkv, int64_t B, int64_t T, int64_t H,
                                    int64_t vectors_per_row) {
  const int64_t total = B * T * 3 * H * vectors_per_row;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    // i walks dqkv (B, T, 3, H, D) in memory order.
    int64_t rest = i;
    const int64_t v = rest % vectors_per_row;
    rest /= vectors_per_row;
    const int64_t h = rest % H;
    rest /= H;
    const int s = static_cast<int>(rest % 3);
    rest /= 3;
    const int64_t t = rest % T, b = rest / T;
    // Picked by value, not indexed: an index known only at run time would put the struct in local memory.
    const char* base = static_cast<const char*>(s == 0 ? src.data[0] : s == 1 ? src.data[1] : src.data[2]);
    if (base == nullptr) {
      dqkv[i] = make_uint4(0, 0, 0, 0);
      continue;
    }
    const int64_t sb = s == 0 ? src.stride_b[0] : s == 1 ? src.stride_b[1] : src.stride_b[2];
    const int64_t sh = s == 0 ? src.stride_h[0] : s == 1 ? src.stride_h[1] : src.stride_h[2];
    const int64_t st = s == 0 ? src.stride_t[0] : s == 1 ? src.stride_t[1] : src.stride_t[2];
    const int64_t at = b * sb + h * sh + t * st + v * 16;
    dqkv[i] = *reinterpret_cast<const uint4*>(base + at);
  }
}

}  // namespace

void heads_to_qkv(const HeadSources& src, void* dqkv, int64_t B, int64_t T, int64_t H, int64_t row_bytes,
                  cudaStream_t stream) {
  const int64_t vectors_per_row = row_bytes / 16, total = B * T * 3 * H * vectors_per_row;
  if (total == 0) return;
  // Enough blocks to fill the device several times over; the grid-stride loop takes the rest.
  const int64_t blocks = std::min<int64_t>((total + kThreads - 1) / kThreads, int64_t{1} << 16);
  heads_to_qkv_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, static_cast<uint4*>(dqkv), B, T, H,
                                                                              vectors_per_row);
}

}  // namespace tokamak::kernels::cuda
