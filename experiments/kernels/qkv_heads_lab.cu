// Lab for the attention heads' backward (engine/torch/kernels/qkv_heads.cu), llm.c's dev/cuda habit: each version checked
// against a plain CPU reference (a copy, so exactly), then timed with CUDA events; one line a version: ms, GB/s
// moved, the check. The shape GPT-2 has at batch 64 under bf16 autocast: dq, dk, dv (B, H, T, D) contiguous, as the
// attention's backward allocates them, into dqkv (B, T, 3C), c_attn's output gradient.
//   v1  autograd's own way, as kernels of the same kind: each head gradient reshaped from (B, H, T, D) to (B, T, C)
//       by an element-a-thread strided copy (ATen's generic TensorIterator kernel takes such transposes; the first
//       sitting's profile put 36 unnamed launches of it at 0.36 ms each), then the cat into (B, T, 3C):
//       8 bytes an element of dqkv.
//   v2  one kernel, 16 bytes a thread, each head row read where it lies and written into its slot of dqkv:
//       4 bytes an element (heads_to_qkv, what speed.fused_glue runs).
//   qkv_heads_lab [B] [T] [H] [D] [ROUNDS]   (defaults: GPT-2 124M at batch 64: 64 1024 12 64)
// Built by scripts/gpu-kit.sh (CMake target qkv_heads_lab, with CUDA); without a GPU it says so and exits.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "engine/torch/kernels/qkv_heads.cu"  // v2: the production kernel itself
#include "experiments/kernels/lab.cuh"

const char* lab::name = "qkv_heads_lab";

namespace {

// v1's reshape: dst (B, T, H, D) contiguous from src (B, H, T, D) contiguous, an element a thread.
__global__ void reshape_heads(const uint16_t* src, uint16_t* dst, int64_t B, int64_t T, int64_t H, int64_t D) {
  const int64_t n = B * T * H * D;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t d = i % D, h = i / D % H, t = i / (D * H) % T, b = i / (D * H * T);
    dst[i] = src[((b * H + h) * T + t) * D + d];
  }
}
// v1's cat: part s (B, T, C) into columns s·C .. of out (B, T, 3C).
__global__ void cat_part(const uint16_t* part, uint16_t* out, int64_t rows, int64_t C, int s) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < rows * C;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i / C * 3 * C + s * C + i % C] = part[i];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t B = argc > 1 ? std::atoll(argv[1]) : 64, T = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int64_t H = argc > 3 ? std::atoll(argv[3]) : 12, D = argc > 4 ? std::atoll(argv[4]) : 64;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 20;
  if (B < 1 || T < 1 || H < 1 || D < 8 || D % 8 != 0 || rounds < 1) {
    std::fprintf(stderr, "qkv_heads_lab: B, T, H >= 1, D a multiple of 8 (16-byte bf16 rows), ROUNDS >= 1\n");
    return 2;
  }
  if (lab::no_gpu()) return 0;
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("qkv_heads_lab: dq, dk, dv (B, H, T, D) bf16 -> dqkv (B, T, 3C), B=%lld T=%lld H=%lld D=%lld on %s\n",
              static_cast<long long>(B), static_cast<long long>(T), static_cast<long long>(H),
              static_cast<long long>(D), prop.name);
  const int64_t C = H * D;
  const size_t n = static_cast<size_t>(B * T * C);  // elements of one head gradient
  std::vector<uint16_t> heads_h(3 * n), ref(3 * n);
  std::mt19937 gen(1337);
  for (uint16_t& v : heads_h) v = static_cast<uint16_t>(gen());  // a copy moves bits: any bits will do
  for (int64_t s = 0; s < 3; ++s)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t)
          for (int64_t d = 0; d < D; ++d)
            ref[((b * T + t) * 3 + s) * C + h * D + d] = heads_h[s * n + ((b * H + h) * T + t) * D + d];
  uint16_t *heads, *parts, *out;
  LAB_CHECK(cudaMalloc(&heads, 3 * n * 2));
  LAB_CHECK(cudaMalloc(&parts, 3 * n * 2));
  LAB_CHECK(cudaMalloc(&out, 3 * n * 2));
  LAB_CHECK(cudaMemcpy(heads, heads_h.data(), 3 * n * 2, cudaMemcpyHostToDevice));
  const auto v1 = [&] {
    for (int s = 0; s < 3; ++s) reshape_heads<<<1024, 256>>>(heads + s * n, parts + s * n, B, T, H, D);
    for (int s = 0; s < 3; ++s) cat_part<<<1024, 256>>>(parts + s * n, out, B * T, C, s);
  };
  const auto v2 = [&] {
    tokamak::kernels::cuda::HeadSources src{};
    for (int s = 0; s < 3; ++s) {
      src.data[s] = heads + s * n;
      src.stride_b[s] = H * T * D * 2, src.stride_h[s] = T * D * 2, src.stride_t[s] = D * 2;
    }
    tokamak::kernels::cuda::heads_to_qkv(src, out, B, T, H, D * 2, 0);
  };
  const std::vector<std::pair<const char*, std::pair<double, std::function<void()>>>> versions = {
      {"v1 strided reshapes + cat", {8.0, v1}}, {"v2 one kernel, 16-byte moves", {4.0, v2}}};
  std::vector<uint16_t> got(3 * n);
  bool all_ok = true;
  for (const auto& [name, spec] : versions) {
    LAB_CHECK(cudaMemset(out, 0, 3 * n * 2));
    spec.second();
    LAB_CHECK(cudaGetLastError());
    LAB_CHECK(cudaDeviceSynchronize());
    LAB_CHECK(cudaMemcpy(got.data(), out, 3 * n * 2, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < 3 * n; ++i) wrong += got[i] != ref[i];
    const float best = lab::best_ms(rounds, [&] { spec.second(); });
    all_ok = all_ok && wrong == 0;
    std::printf("  %-36s %8.3f ms  %7.0f GB/s  check %s (%zu of %zu elements differ)\n", name, best,
                spec.first * static_cast<double>(3 * n) / best / 1e6, wrong == 0 ? "ok" : "FAILED", wrong, 3 * n);
  }
  for (void* p : {static_cast<void*>(heads), static_cast<void*>(parts), static_cast<void*>(out)}) cudaFree(p);
  return all_ok ? 0 : 1;
}
