// Lab for the MLP's GELU backward fused with its bias gradient (engine/torch/kernels/bias_gelu.cu), llm.c's dev/cuda
// habit: every version is checked against a plain CPU reference with a tolerance that scales with the dtype
// (|got - ref| <= atol + rtol·|ref|), then timed with CUDA events; one line a version: ms, GB/s moved, and the
// check. A version earns its place in engine/torch/kernels when it is faster here and passes test_kernels and
// compute-sanitizer on a GPU.
//   v1  the production kernel: in place over d (the ATen glue clones the incoming gradient first), 2-byte
//       loads, 256 threads × 32 rows a block, shared column sums.
//   v2  out of place (no clone: reads d and pre, writes dpre), 16-byte loads and stores (8 bf16 a thread),
//       each block a strip of rows, column sums in registers, one atomicAdd per column and block: the kernel
//       speed.fused_glue runs (gelu_backward_bias_out).
//   bias_gelu_lab [N] [C] [ROUNDS]   (defaults: GPT-2 124M at batch 64: N = 65536, C = 3072)
// Built by scripts/gpu-kit.sh (CMake target bias_gelu_lab, with CUDA); without a GPU it says so and exits 0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "engine/torch/kernels/bias_gelu.cu"  // v1 and v2: the production kernels themselves, not copies
#include "experiments/kernels/lab.cuh"

const char* lab::name = "bias_gelu_lab";

namespace {

using tokamak::kernels::cuda::DType;

float gelu_grad_host(float x) {
  const float k0 = 0.7978845608028654f, k1 = 0.044715f;
  const float t = std::tanh(k0 * (x + k1 * x * x * x));
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * k0 * (1.f + 3.f * k1 * x * x);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t N = argc > 1 ? std::atoll(argv[1]) : 65536, C = argc > 2 ? std::atoll(argv[2]) : 3072;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 20;
  if (N < 1 || C < 8 || C % 8 != 0 || rounds < 1) {
    std::fprintf(stderr, "bias_gelu_lab: N >= 1, C a multiple of 8 and ROUNDS >= 1 (got %lld %lld %d)\n",
                 static_cast<long long>(N), static_cast<long long>(C), rounds);
    return 2;
  }
  if (lab::no_gpu()) return 0;
  cudaDeviceProp prop;
  LAB_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("bias_gelu_lab: GELU backward + bias gradient, bf16, N=%lld C=%lld on %s, %d rounds\n",
              static_cast<long long>(N), static_cast<long long>(C), prop.name, rounds);
  // Inputs: the incoming gradient ~ N(0, 1e-3), pre-activations ~ N(0, 1): a step's scales.
  const size_t count = static_cast<size_t>(N * C);
  std::vector<__nv_bfloat16> d_host(count), pre_host(count);
  std::mt19937 gen(1337);
  std::normal_distribution<float> small(0.f, 1e-3f), unit(0.f, 1.f);
  for (size_t i = 0; i < count; ++i)
    d_host[i] = __float2bfloat16(small(gen)), pre_host[i] = __float2bfloat16(unit(gen));
  // The CPU reference, in fp32 from the same bf16 inputs; the column sums in double.
  std::vector<float> ref(count);
  std::vector<double> ref_bias(C, 0.0);
  for (int64_t r = 0; r < N; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const size_t i = static_cast<size_t>(r * C + c);
      ref[i] = lab::bf16_to_float(d_host[i]) * gelu_grad_host(lab::bf16_to_float(pre_host[i]));
      ref_bias[c] += ref[i];
    }
  __nv_bfloat16 *d, *pre, *scratch, *out;
  float* dbias;
  LAB_CHECK(cudaMalloc(&d, count * 2));
  LAB_CHECK(cudaMalloc(&pre, count * 2));
  LAB_CHECK(cudaMalloc(&scratch, count * 2));
  LAB_CHECK(cudaMalloc(&out, count * 2));
  LAB_CHECK(cudaMalloc(&dbias, C * sizeof(float)));
  LAB_CHECK(cudaMemcpy(d, d_host.data(), count * 2, cudaMemcpyHostToDevice));
  LAB_CHECK(cudaMemcpy(pre, pre_host.data(), count * 2, cudaMemcpyHostToDevice));

  struct Version {
    const char* name;
    double bytes;            // moved a call, for GB/s
    void (*run)(void* ctx);  // one call, from the same inputs each time
    const __nv_bfloat16* (*result)(void* ctx);
  };
  struct Ctx {
    __nv_bfloat16 *d, *pre, *scratch, *out;
    float* dbias;
    int64_t N, C;
  } ctx{d, pre, scratch, out, dbias, N, C};
  const Version versions[] = {
      // v1 as the glue runs it: clone d (read + write), then read it and pre, write it in place.
      {"v1 production (clone + in place)", 5.0 * count * 2,
       [](void* p) {
         auto* x = static_cast<Ctx*>(p);
         cudaMemcpyAsync(x->scratch, x->d, x->N * x->C * 2, cudaMemcpyDeviceToDevice);
         cudaMemsetAsync(x->dbias, 0, x->C * sizeof(float));
         tokamak::kernels::cuda::gelu_backward_bias(DType::kBFloat16, x->scratch, x->pre, x->dbias, x->N, x->C, 0);
       },
       [](void* p) -> const __nv_bfloat16* { return static_cast<Ctx*>(p)->scratch; }},
      {"v2 out of place, 16-byte packs", 3.0 * count * 2,
       [](void* p) {
         auto* x = static_cast<Ctx*>(p);
         cudaMemsetAsync(x->dbias, 0, x->C * sizeof(float));
         tokamak::kernels::cuda::gelu_backward_bias_out(x->d, x->pre, x->out, x->dbias, x->N, x->C, 0);
       },
       [](void* p) -> const __nv_bfloat16* { return static_cast<Ctx*>(p)->out; }},
  };
  bool all_ok = true;
  std::vector<__nv_bfloat16> got(count);
  std::vector<float> got_bias(C);
  for (const Version& v : versions) {
    v.run(&ctx);
    LAB_CHECK(cudaGetLastError());
    LAB_CHECK(cudaDeviceSynchronize());
    LAB_CHECK(cudaMemcpy(got.data(), v.result(&ctx), count * 2, cudaMemcpyDeviceToHost));
    LAB_CHECK(cudaMemcpy(got_bias.data(), dbias, C * sizeof(float), cudaMemcpyDeviceToHost));
    lab::Check values, bias;
    for (size_t i = 0; i < count; ++i) values.add(lab::bf16_to_float(got[i]), ref[i], 1e-6, 1.0 / 128);  // bf16
    for (int64_t c = 0; c < C; ++c) bias.add(got_bias[c], ref_bias[c], 1e-5, 1e-3);
    const float best = lab::best_ms(rounds, [&] { v.run(&ctx); });
    const bool ok = values.ok() && bias.ok();
    all_ok = all_ok && ok;
    std::printf("  %-36s %8.3f ms  %7.0f GB/s  check %s (worst %.2f values, %.2f bias of the tolerance)\n", v.name,
                best, v.bytes / best / 1e6, ok ? "ok" : "FAILED", values.worst, bias.worst);
  }
  cudaFree(d), cudaFree(pre), cudaFree(scratch), cudaFree(out), cudaFree(dbias);
  return all_ok ? 0 : 1;
}
