// Lab for the fused classifier (engine/torch/kernels/classifier.*), llm.c's dev/cuda habit: checks each variant
// against the reference once, then times forward + backward of the reference (linear, narrow, cross_entropy,
// autograd) and of the fused kernel at several chunk sizes. Prints one line per variant: min and median ms
// over the rounds, and the least process CPU time of a round (on a machine others use too, CPU time with one
// thread is what still compares variants). Built and run by classifier_lab.sh.
//   classifier_lab N C [THREADS] [ROUNDS] [cpu|cuda] [fp32|bf16]
// bf16 runs every variant under bf16 autocast, as a training step with speed.precision=bf16 does.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <time.h>

#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/kernels/classifier.h"
#include "engine/torch/kernels/reference.h"

using namespace tokamak;

namespace {

constexpr int64_t kVocab = 50257, kPadded = 50304;

double now_ms(const at::Device& device) {
  if (device.is_cuda()) at::zeros({1}, at::TensorOptions().device(device)).item<float>();  // a sync
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// One forward + backward through `loss_fn`; returns the loss and the gradients for the parity check.
std::vector<at::Tensor> step(const std::function<at::Tensor(const at::Tensor&, const at::Tensor&)>& loss_fn,
                             const at::Tensor& x0, const at::Tensor& w0) {
  at::Tensor x = x0.detach().requires_grad_(), w = w0.detach().requires_grad_();
  at::Tensor loss = loss_fn(x, w);
  loss.backward();
  return {loss.detach(), x.grad(), w.grad()};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: classifier_lab N C [THREADS] [ROUNDS] [cpu|cuda]\n");
    return 2;
  }
  const int64_t N = std::atoll(argv[1]), C = std::atoll(argv[2]);
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2, rounds = argc > 4 ? std::atoi(argv[4]) : 5;
  const at::Device device(argc > 5 ? std::string(argv[5]) : std::string("cpu"));
  const bool bf16 = argc > 6 && std::string(argv[6]) == "bf16";
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // one line per variant as it finishes, also into a file
  tokamak::configure_cpu(threads);           // threads and allocator exactly as a training run has them
  at::manual_seed(1);
  const auto opts = at::TensorOptions().device(device);
  const at::Tensor x = at::randn({N, C}, opts), targets = at::randint(0, kVocab, {N}, opts.dtype(at::kLong));
  at::Tensor w = at::randn({kPadded, C}, opts) * 0.02;
  w.narrow(0, kVocab, kPadded - kVocab).zero_();

  struct Variant {
    std::string name;
    std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> fn;
  };
  std::vector<Variant> variants = {
      {"reference (linear + cross_entropy)",
       [&](const at::Tensor& a, const at::Tensor& b) { return kernels::classifier_reference(a, b, targets, kVocab); }}};
  for (int64_t chunk : {128, 256, 512, 1024, 2048, 4096, 8192})
    if (chunk <= N)
      variants.push_back(
          {"fused, chunk " + std::to_string(chunk), [&, chunk](const at::Tensor& a, const at::Tensor& b) {
             return kernels::fused_classifier(a, b, targets, {kVocab, chunk});
           }});

  if (bf16)
    for (Variant& v : variants)
      v.fn = [fn = v.fn, type = device.type()](const at::Tensor& a, const at::Tensor& b) {
        at::autocast::set_autocast_enabled(type, true);
        at::autocast::set_autocast_dtype(type, at::kBFloat16);
        at::Tensor loss = fn(a, b);
        at::autocast::set_autocast_enabled(type, false);
        at::autocast::clear_cache();
        return loss;
      };
  const std::vector<at::Tensor> ref = step(variants[0].fn, x, w);
  std::printf("N=%lld C=%lld V=%lld (padded %lld), %d threads, %s, %s, %d rounds\n", (long long)N, (long long)C,
              (long long)kVocab, (long long)kPadded, threads, device.str().c_str(), bf16 ? "bf16 autocast" : "fp32",
              rounds);
  for (const Variant& v : variants) {
    const std::vector<at::Tensor> got = step(v.fn, x, w);  // also the warm-up
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, (got[i] - ref[i]).abs().max().item<double>());
    std::vector<double> ms;
    double cpu = 1e30;
    for (int r = 0; r < rounds; ++r) {
      const double t0 = now_ms(device), c0 = cpu_ms();
      step(v.fn, x, w);
      ms.push_back(now_ms(device) - t0);
      cpu = std::min(cpu, cpu_ms() - c0);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%-36s min %8.1f ms  median %8.1f ms  cpu %8.1f ms  max|diff| %.2e\n", v.name.c_str(), ms.front(),
                ms[ms.size() / 2], cpu, worst);
  }
  // The floor: the three full-size matmuls every variant does (logits, dx, dweight) and nothing else.
  std::vector<double> ms;
  double cpu = 1e30;
  for (int r = 0; r <= rounds; ++r) {
    c10::AutoGradMode no_grad(false);
    const at::Tensor xd = bf16 ? x.to(at::kBFloat16) : x, wd = bf16 ? w.to(at::kBFloat16) : w;
    const double t0 = now_ms(device), c0 = cpu_ms();
    const at::Tensor logits = at::mm(xd, wd.t());
    const at::Tensor dx = at::mm(logits, wd), dw = at::mm(logits.t(), xd);
    if (r > 0) ms.push_back(now_ms(device) - t0), cpu = std::min(cpu, cpu_ms() - c0);  // round 0 warms up
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-36s min %8.1f ms  median %8.1f ms  cpu %8.1f ms\n", "the 3 matmuls alone (floor)", ms.front(),
              ms[ms.size() / 2], cpu);
  return 0;
}
