// Lab for the fused residual add + LayerNorm forward (engine/torch/kernels/residual_layernorm.cu), llm.c's dev/cuda
// habit: each version checked against a plain CPU reference (|got - ref| <= atol + rtol·|ref|, rtol by the
// output's dtype), then timed with CUDA events; one line a version: ms, GB/s moved, the check.
// The shape a GPT-2 block has under bf16 autocast: the residual stream x in fp32, the attention branch in bf16,
// h = x + branch kept in fp32, y = LayerNorm(h) the input of the next matmul.
//   v1  what the glue runs today: cast the branch to fp32 (a kernel of its own), the production kernel in fp32
//       (one warp a row, 4-byte loads, h and y fp32), then autocast's cast of y to bf16 for the matmul:
//       28 bytes an element.
//   v2  one kernel, mixed dtypes: reads x fp32 and the branch bf16 with 16-byte loads, keeps the row in
//       registers, writes h fp32 and y bf16: 12 bytes an element, no casts (residual_layernorm_forward_mixed,
//       what speed.fused_glue runs).
//   residual_layernorm_lab [N] [C] [ROUNDS]   (defaults: GPT-2 124M at batch 64: N = 65536, C = 768)
// Built by scripts/gpu-kit.sh (CMake target residual_layernorm_lab, with CUDA); without a GPU it says so and exits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "engine/torch/kernels/residual_layernorm.cu"  // v1 and v2: the production kernels themselves
#include "experiments/kernels/lab.cuh"

const char* lab::name = "residual_layernorm_lab";

namespace {

using tokamak::kernels::cuda::DType;

// What ATen's casts do for v1, as kernels of their own.
__global__ void to_fp32(const __nv_bfloat16* in, float* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}
__global__ void to_bf16(const float* in, __nv_bfloat16* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16(in[i]);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 65536, C = argc > 2 ? std::atoll(argv[2]) : 768;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  if (N < 1 || C < 8 || C % 8 != 0 || C > tokamak::kernels::cuda::kMixedMaxC || rounds < 1) {
    std::fprintf(stderr, "residual_layernorm_lab: N >= 1, C a multiple of 8 up to %lld, ROUNDS >= 1\n",
                 static_cast<long long>(tokamak::kernels::cuda::kMixedMaxC));
    return 2;
  }
  if (lab::no_gpu()) return 0;
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("residual_layernorm_lab: h = x + branch, y = LayerNorm(h); x fp32, branch bf16, N=%lld C=%lld on %s\n",
              static_cast<long long>(N), static_cast<long long>(C), prop.name);
  const size_t n = static_cast<size_t>(N * C);
  std::vector<float> x_h(n), w_h(C), b_h(C);
  std::vector<__nv_bfloat16> br_h(n);
  std::mt19937 gen(1337);
  std::normal_distribution<float> unit(0.f, 1.f);
  for (size_t i = 0; i < n; ++i) x_h[i] = unit(gen), br_h[i] = __float2bfloat16(0.1f * unit(gen));
  for (int64_t c = 0; c < C; ++c) w_h[c] = 1.f + 0.1f * unit(gen), b_h[c] = 0.1f * unit(gen);
  // The CPU reference, in double.
  std::vector<double> h_ref(n), y_ref(n);
  for (int64_t r = 0; r < N; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < C; ++c)
      h_ref[r * C + c] = static_cast<double>(x_h[r * C + c]) + lab::bf16_to_float(br_h[r * C + c]);
    for (int64_t c = 0; c < C; ++c) m += h_ref[r * C + c];
    m /= C;
    for (int64_t c = 0; c < C; ++c) v += (h_ref[r * C + c] - m) * (h_ref[r * C + c] - m);
    const double s = 1.0 / std::sqrt(v / C + 1e-5);
    for (int64_t c = 0; c < C; ++c) y_ref[r * C + c] = (h_ref[r * C + c] - m) * s * w_h[c] + b_h[c];
  }
  float *x, *w, *b, *br32, *h, *y32, *mean, *rstd;
  __nv_bfloat16 *br, *y16;
  LAB_CHECK(cudaMalloc(&x, n * 4));
  LAB_CHECK(cudaMalloc(&br, n * 2));
  LAB_CHECK(cudaMalloc(&br32, n * 4));
  LAB_CHECK(cudaMalloc(&h, n * 4));
  LAB_CHECK(cudaMalloc(&y32, n * 4));
  LAB_CHECK(cudaMalloc(&y16, n * 2));
  LAB_CHECK(cudaMalloc(&w, C * 4));
  LAB_CHECK(cudaMalloc(&b, C * 4));
  LAB_CHECK(cudaMalloc(&mean, N * 4));
  LAB_CHECK(cudaMalloc(&rstd, N * 4));
  LAB_CHECK(cudaMemcpy(x, x_h.data(), n * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(br, br_h.data(), n * 2, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(w, w_h.data(), C * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(b, b_h.data(), C * 4, cudaMemcpyHostToDevice));
  const auto v1 = [&] {
    to_fp32<<<1024, 256>>>(br, br32, static_cast<int64_t>(n));
    tokamak::kernels::cuda::residual_layernorm_forward(DType::kFloat, x, br32, w, b, h, y32, mean, rstd, N, C, 0);
    to_bf16<<<1024, 256>>>(y32, y16, static_cast<int64_t>(n));
  };
  const auto v2 = [&] {
    tokamak::kernels::cuda::residual_layernorm_forward_mixed(x, br, w, b, h, y16, mean, rstd, N, C, 0);
  };
  const std::vector<std::pair<const char*, std::pair<double, std::function<void()>>>> versions = {
      {"v1 cast + production fp32 + cast", {28.0, v1}}, {"v2 mixed dtypes, 16-byte packs", {12.0, v2}}};
  std::vector<float> h_got(n);
  std::vector<__nv_bfloat16> y_got(n);
  bool all_ok = true;
  for (const auto& [name, spec] : versions) {
    LAB_CHECK(cudaMemset(h, 0, n * 4));
    LAB_CHECK(cudaMemset(y16, 0, n * 2));
    spec.second();
    LAB_CHECK(cudaGetLastError());
    LAB_CHECK(cudaDeviceSynchronize());
    LAB_CHECK(cudaMemcpy(h_got.data(), h, n * 4, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(y_got.data(), y16, n * 2, cudaMemcpyDeviceToHost));
    lab::Check hc, yc;
    for (size_t i = 0; i < n; ++i)
      hc.add(h_got[i], h_ref[i], 1e-6, 1e-6), yc.add(lab::bf16_to_float(y_got[i]), y_ref[i], 1e-2, 1.0 / 128);
    const float best = lab::best_ms(rounds, [&] { spec.second(); });
    const bool ok = hc.worst <= 1 && yc.worst <= 1;
    all_ok = all_ok && ok;
    std::printf("  %-36s %8.3f ms  %7.0f GB/s  check %s (worst %.2f h, %.2f y of the tolerance)\n", name, best,
                spec.first * static_cast<double>(n) / best / 1e6, ok ? "ok" : "FAILED", hc.worst, yc.worst);
  }
  for (void* p : {static_cast<void*>(x), static_cast<void*>(br), static_cast<void*>(br32), static_cast<void*>(h),
                  static_cast<void*>(y32), static_cast<void*>(y16), static_cast<void*>(w), static_cast<void*>(b),
                  static_cast<void*>(mean), static_cast<void*>(rstd)})
    cudaFree(p);
  return all_ok ? 0 : 1;
}
