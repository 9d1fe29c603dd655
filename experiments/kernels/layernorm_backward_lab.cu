// Lab for the LayerNorm backward of a bf16 block (engine/torch/kernels/residual_layernorm.cu), llm.c's dev/cuda habit:
// each version checked against a plain CPU reference (|got - ref| <= atol + rtol·|ref|), then timed with CUDA events;
// one line a version: ms, GB/s moved, the check. The dtypes speed.fused_glue gives it: dy bf16 (the matmul's input
// gradient), h fp32 (the residual stream), the stream's own gradient dh_in fp32 in, dh_out fp32 and the branch's
// gradient bf16 out, dweight and dbias summed over the rows: 16 bytes an element. Since the residual add moved
// across the block boundary it runs 25 times a GPT-2 124M step (ln_1 and ln_2 of each block, and ln_f).
//   v1  an element a lane, two shared-memory atomics an element and row for dweight and dbias (the kernel the glue
//       ran first; still the one for widths over 1,280).
//   v2  16-byte packs, the lane's dweight and dbias sums in registers over all of its warp's rows
//       (layernorm_backward_mixed, what the glue runs).
//   layernorm_backward_lab [N] [C] [ROUNDS]   (defaults: GPT-2 124M at batch 64: N = 65536, C = 768)
// Built by scripts/gpu-kit.sh (CMake target layernorm_backward_lab, with CUDA); without a GPU it says so and exits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "engine/torch/kernels/residual_layernorm.cu"  // v1 and v2: the production kernels themselves
#include "experiments/kernels/lab.cuh"

const char* lab::name = "layernorm_backward_lab";

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 65536, C = argc > 2 ? std::atoll(argv[2]) : 768;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  if (N < 1 || C < 8 || C % 8 != 0 || C > tokamak::kernels::cuda::kMixedMaxC || rounds < 1) {
    std::fprintf(stderr, "layernorm_backward_lab: N >= 1, C a multiple of 8 up to %lld, ROUNDS >= 1\n",
                 static_cast<long long>(tokamak::kernels::cuda::kMixedMaxC));
    return 2;
  }
  if (lab::no_gpu()) return 0;
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf(
      "layernorm_backward_lab: dy bf16, h fp32, dh_in fp32 -> dh_out fp32, dbranch bf16, dweight, dbias; "
      "N=%lld C=%lld on %s\n",
      static_cast<long long>(N), static_cast<long long>(C), prop.name);
  const size_t n = static_cast<size_t>(N * C);
  std::vector<float> h_h(n), in_h(n), w_h(C), mean_h(N), rstd_h(N);
  std::vector<__nv_bfloat16> dy_h(n);
  std::mt19937 gen(1337);
  std::normal_distribution<float> unit(0.f, 1.f);
  for (size_t i = 0; i < n; ++i) h_h[i] = unit(gen), in_h[i] = 0.1f * unit(gen), dy_h[i] = __float2bfloat16(unit(gen));
  for (int64_t c = 0; c < C; ++c) w_h[c] = 1.f + 0.1f * unit(gen);
  // The CPU reference, in double, from the statistics the forward would have kept.
  std::vector<double> g_ref(n), dw_ref(C, 0.0), db_ref(C, 0.0);
  for (int64_t r = 0; r < N; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < C; ++c) m += h_h[r * C + c];
    m /= C;
    for (int64_t c = 0; c < C; ++c) v += (h_h[r * C + c] - m) * (h_h[r * C + c] - m);
    mean_h[r] = static_cast<float>(m), rstd_h[r] = static_cast<float>(1.0 / std::sqrt(v / C + 1e-5));
    const double s = rstd_h[r];
    double a = 0, b = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double d = lab::bf16_to_float(dy_h[r * C + c]), norm = (h_h[r * C + c] - mean_h[r]) * s;
      a += d * w_h[c], b += d * w_h[c] * norm;
    }
    a /= C, b /= C;
    for (int64_t c = 0; c < C; ++c) {
      const double d = lab::bf16_to_float(dy_h[r * C + c]), norm = (h_h[r * C + c] - mean_h[r]) * s;
      g_ref[r * C + c] = in_h[r * C + c] + (d * w_h[c] - a - norm * b) * s;
      dw_ref[c] += d * norm, db_ref[c] += d;
    }
  }
  float *h, *in, *w, *mean, *rstd, *out, *dw, *db;
  __nv_bfloat16 *dy, *branch;
  LAB_CHECK(cudaMalloc(&h, n * 4));
  LAB_CHECK(cudaMalloc(&in, n * 4));
  LAB_CHECK(cudaMalloc(&out, n * 4));
  LAB_CHECK(cudaMalloc(&dy, n * 2));
  LAB_CHECK(cudaMalloc(&branch, n * 2));
  LAB_CHECK(cudaMalloc(&w, C * 4));
  LAB_CHECK(cudaMalloc(&dw, C * 4));
  LAB_CHECK(cudaMalloc(&db, C * 4));
  LAB_CHECK(cudaMalloc(&mean, N * 4));
  LAB_CHECK(cudaMalloc(&rstd, N * 4));
  LAB_CHECK(cudaMemcpy(h, h_h.data(), n * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(in, in_h.data(), n * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(dy, dy_h.data(), n * 2, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(w, w_h.data(), C * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(mean, mean_h.data(), N * 4, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(rstd, rstd_h.data(), N * 4, cudaMemcpyHostToDevice));
  namespace k = tokamak::kernels::cuda;
  const int blocks = k::blocks_for(N) < 1024 ? k::blocks_for(N) : 1024;
  const auto v1 = [&] {
    LAB_CHECK(cudaMemsetAsync(dw, 0, C * 4));
    LAB_CHECK(cudaMemsetAsync(db, 0, C * 4));
    k::layernorm_backward_mixed_kernel<<<blocks, k::kWarps * 32, 2 * C * sizeof(float)>>>(dy, h, w, mean, rstd, in, out,
                                                                                          branch, dw, db, N, C);
  };
  const auto v2 = [&] {
    LAB_CHECK(cudaMemsetAsync(dw, 0, C * 4));
    LAB_CHECK(cudaMemsetAsync(db, 0, C * 4));
    k::layernorm_backward_mixed(dy, h, w, mean, rstd, in, out, branch, dw, db, N, C, 0);
  };
  const std::vector<std::pair<const char*, std::function<void()>>> versions = {
      {"v1 an element a lane", v1}, {"v2 16-byte packs, sums in registers", v2}};
  std::vector<float> out_got(n), dw_got(C), db_got(C);
  std::vector<__nv_bfloat16> branch_got(n);
  bool all_ok = true;
  for (const auto& [name, run] : versions) {
    LAB_CHECK(cudaMemset(out, 0, n * 4));
    LAB_CHECK(cudaMemset(branch, 0, n * 2));
    run();
    LAB_CHECK(cudaGetLastError());
    LAB_CHECK(cudaDeviceSynchronize());
    LAB_CHECK(cudaMemcpy(out_got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(branch_got.data(), branch, n * 2, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(dw_got.data(), dw, C * 4, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(db_got.data(), db, C * 4, cudaMemcpyDeviceToHost));
    lab::Check gc, bc, sc;
    for (size_t i = 0; i < n; ++i)
      gc.add(out_got[i], g_ref[i], 1e-5, 1e-4), bc.add(lab::bf16_to_float(branch_got[i]), g_ref[i], 1e-6, 1.0 / 128);
    // The column sums add N rows in fp32 in an order of the atomics' choosing: relative to the sum of magnitudes.
    for (int64_t c = 0; c < C; ++c) sc.add(dw_got[c], dw_ref[c], 1e-3 * std::sqrt(double(N)), 1e-4);
    for (int64_t c = 0; c < C; ++c) sc.add(db_got[c], db_ref[c], 1e-3 * std::sqrt(double(N)), 1e-4);
    const float best = lab::best_ms(rounds, run);
    const bool ok = gc.ok() && bc.ok() && sc.ok();
    all_ok = all_ok && ok;
    std::printf("  %-36s %8.3f ms  %7.0f GB/s  check %s (worst %.2f dh, %.2f dbranch, %.2f sums of the tolerance)\n",
                name, best, 16.0 * static_cast<double>(n) / best / 1e6, ok ? "ok" : "FAILED", gc.worst, bc.worst,
                sc.worst);
  }
  for (void* p : {static_cast<void*>(h), static_cast<void*>(in), static_cast<void*>(out), static_cast<void*>(dy),
                  static_cast<void*>(branch), static_cast<void*>(w), static_cast<void*>(dw), static_cast<void*>(db),
                  static_cast<void*>(mean), static_cast<void*>(rstd)})
    cudaFree(p);
  return all_ok ? 0 : 1;
}
