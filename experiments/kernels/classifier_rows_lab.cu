// Lab for the fused classifier's row kernel (engine/torch/kernels/classifier.cu): a chunk's bf16 logits turned into each
// row's loss and, in place, dlogits. Each version checked against a CPU reference in double on a sample of rows (the
// first and last 32: the whole chunk's reference would take the CPU minutes), every other row's loss finite, then timed with CUDA events, the logits restored from a pristine copy
// before every run (outside the timed region: the kernel overwrites its input). GB/s counts the floor's bytes: the
// row read once and written once (4 bytes an element in bf16).
//   v1  packed: 16-byte packs, the row read twice (the production kernel until 2026-12-06).
//   v2  cached: the same, the row kept in shared memory between the softmax and the gradient (production now, where
//       the row fits).
//   classifier_rows_lab [ROWS] [V] [VP] [ROUNDS]   (defaults: GPT-2 124M at batch 64 in one chunk: 65536 rows of
//   50257 classes padded to 50304)
// Built by scripts/gpu-kit.sh (CMake target classifier_rows_lab, with CUDA); without a GPU it says so and exits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#include "engine/torch/kernels/classifier.cu"  // both versions: the production kernel itself
#include "experiments/kernels/lab.cuh"

const char* lab::name = "classifier_rows_lab";

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 65536, V = argc > 2 ? std::atoll(argv[2]) : 50257;
  const int64_t Vp = argc > 3 ? std::atoll(argv[3]) : 50304;
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 10;
  if (N < 64 || V < 1 || Vp < V || Vp % 8 != 0 || rounds < 1) {
    std::fprintf(stderr, "classifier_rows_lab: ROWS >= 64, 1 <= V <= VP, VP a multiple of 8, ROUNDS >= 1\n");
    return 2;
  }
  if (lab::no_gpu()) return 0;
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("classifier_rows_lab: bf16 logits -> loss and dlogits in place; rows=%lld V=%lld Vp=%lld on %s\n",
              static_cast<long long>(N), static_cast<long long>(V), static_cast<long long>(Vp), prop.name);
  const size_t n = static_cast<size_t>(N * Vp);
  std::vector<__nv_bfloat16> logits_h(n);
  std::vector<int64_t> targets_h(N);
  std::mt19937 gen(1337);
  std::normal_distribution<float> unit(0.f, 2.f);
  std::uniform_int_distribution<int64_t> cls(0, V - 1);
  for (size_t i = 0; i < n; ++i) logits_h[i] = __float2bfloat16(unit(gen));
  for (int64_t r = 0; r < N; ++r) targets_h[r] = r == 1 ? -100 : cls(gen);  // one ignored row
  const float valid = static_cast<float>(N - 1);
  // The reference, in double, for the sampled rows: loss and gradient.
  std::vector<int64_t> sample;
  for (int64_t r = 0; r < 32; ++r) sample.push_back(r), sample.push_back(N - 1 - r);
  std::vector<double> loss_ref(sample.size());
  std::vector<std::vector<double>> grad_ref(sample.size(), std::vector<double>(Vp, 0.0));
  for (size_t k = 0; k < sample.size(); ++k) {
    const int64_t r = sample[k];
    const __nv_bfloat16* row = logits_h.data() + r * Vp;
    double m = -INFINITY, s = 0;
    for (int64_t i = 0; i < V; ++i) m = std::max(m, double(lab::bf16_to_float(row[i])));
    for (int64_t i = 0; i < V; ++i) s += std::exp(double(lab::bf16_to_float(row[i])) - m);
    const double lse = m + std::log(s);
    loss_ref[k] = targets_h[r] < 0 ? 0 : lse - lab::bf16_to_float(row[targets_h[r]]);
    if (targets_h[r] < 0) continue;
    for (int64_t i = 0; i < V; ++i)
      grad_ref[k][i] = (std::exp(double(lab::bf16_to_float(row[i])) - lse) - (i == targets_h[r])) / valid;
  }
  __nv_bfloat16 *logits, *pristine;
  int64_t* targets;
  float *losses, *n_valid;
  LAB_CHECK(cudaMalloc(&logits, n * 2));
  LAB_CHECK(cudaMalloc(&pristine, n * 2));
  LAB_CHECK(cudaMalloc(&targets, N * 8));
  LAB_CHECK(cudaMalloc(&losses, N * 4));
  LAB_CHECK(cudaMalloc(&n_valid, 4));
  LAB_CHECK(cudaMemcpy(pristine, logits_h.data(), n * 2, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(targets, targets_h.data(), N * 8, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(n_valid, &valid, 4, cudaMemcpyHostToDevice));
  namespace k = tokamak::kernels::cuda;
  const auto v1 = [&] {
    k::softmax_ce_grad_packed_kernel<__nv_bfloat16, false><<<N, k::kThreads>>>(logits, V, Vp, targets, losses, n_valid,
                                                                               true);
  };
  const auto v2 = [&] { k::softmax_ce_grad(k::DType::kBFloat16, logits, N, V, Vp, targets, losses, n_valid, true, 0); };
  const std::vector<std::pair<const char*, std::function<void()>>> versions = {{"v1 packed, the row read twice", v1},
                                                                                {"v2 cached in shared memory", v2}};
  std::vector<__nv_bfloat16> got_row(Vp);
  std::vector<float> loss_got(N);
  cudaEvent_t start, stop;
  LAB_CHECK(cudaEventCreate(&start));
  LAB_CHECK(cudaEventCreate(&stop));
  bool all_ok = true;
  for (const auto& [name, run] : versions) {
    float best = INFINITY;
    for (int r = 0; r <= rounds; ++r) {  // run 0 is checked, the rest timed
      LAB_CHECK(cudaMemcpy(logits, pristine, n * 2, cudaMemcpyDeviceToDevice));
      LAB_CHECK(cudaMemset(losses, 0xff, N * 4));  // NaN: an unwritten loss fails the check
      LAB_CHECK(cudaEventRecord(start));
      run();
      LAB_CHECK(cudaEventRecord(stop));
      LAB_CHECK(cudaGetLastError());
      LAB_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      LAB_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (r > 0) best = std::min(best, ms);
      if (r > 0) continue;
      lab::Check lc, gc;
      LAB_CHECK(cudaMemcpy(loss_got.data(), losses, N * 4, cudaMemcpyDeviceToHost));
      bool finite = true;
      for (int64_t i = 0; i < N; ++i) finite = finite && std::isfinite(loss_got[i]);
      if (!finite) lc.add(NAN, 0, 1, 1);
      for (size_t s = 0; s < sample.size(); ++s) {
        lc.add(loss_got[sample[s]], loss_ref[s], 1e-4, 1e-4);
        LAB_CHECK(cudaMemcpy(got_row.data(), logits + sample[s] * Vp, Vp * 2, cudaMemcpyDeviceToHost));
        // bf16 out: 1/128 relative, and an absolute floor of 1/128 of a typical gradient's size.
        for (int64_t i = 0; i < Vp; ++i)
          gc.add(lab::bf16_to_float(got_row[i]), grad_ref[s][i], 1.0 / (128.0 * valid * V), 1.0 / 128);
      }
      const bool ok = lc.ok() && gc.ok();
      all_ok = all_ok && ok;
      std::printf("  %-32s check %s (worst %.2f loss, %.2f dlogits of the tolerance)\n", name, ok ? "ok" : "FAILED",
                  lc.worst, gc.worst);
    }
    std::printf("  %-32s %8.3f ms  %7.0f GB/s (read once, written once)\n", name, best, 4.0 * double(n) / best / 1e6);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  for (void* p : {static_cast<void*>(logits), static_cast<void*>(pristine), static_cast<void*>(targets),
                  static_cast<void*>(losses), static_cast<void*>(n_valid)})
    cudaFree(p);
  return all_ok ? 0 : 1;
}
