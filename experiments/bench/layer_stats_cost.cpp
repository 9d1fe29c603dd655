// What the per-layer statistics cost a run (by default the default CPU run: the nano preset at the default batch and
// context), timed part by part in one process, where a whole run's wall time moves by more than the 1% it is held to:
//   step        one forward + backward of the batch (the step's bulk; the update adds little)
//   grad_jump   every step while the spike watch is on: each group's gradient RMS against its running mean
//   keep        a report step with statistics: the weights copied before the update
//   report      at that report: the norms, the update, and the probe's forward of one sequence, read to the host
// and the share of a step: (grad_jump + (keep + report) / log_every) / step. Medians of REPS repetitions.
// Usage: layer_stats_cost [fp32|bf16] [REPS] [DEVICE PRESET BATCH CONTEXT]
//   experiments/bench/layer_stats_cost.sh builds and runs it (on a GPU: `layer_stats_cost bf16 9 cuda gpt2 64 1024`;
//   the GPU sitting's s_layers measures the same from two runs' own step_ms and layers_ms instead).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/run/metrics.h"
#include "engine/torch/device/device.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/train/layer_stats.h"
#include "engine/torch/train/step.h"
#include "engine/torch/parallel/dist_env.h"
#include "engine/torch/train/trainer.h"

using namespace tokamak;

static c10::Device g_device(c10::kCPU);

static double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    synchronize(g_device);
    const auto start = std::chrono::steady_clock::now();
    f();
    synchronize(g_device);  // a GPU's work is done, not only queued
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char** argv) {
  const bool bf16 = argc > 1 && std::strcmp(argv[1], "bf16") == 0;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 9;
  Config base;
  if (argc > 6) {
    base.device = argv[3];
    apply_overrides(base, {std::string("model.preset=") + argv[4], std::string("train.batch_size=") + argv[5],
                           std::string("train.context=") + argv[6]});
  }
  apply_model_preset(base.model, base.model.preset);
  base.speed.precision = bf16 ? Precision::kBf16 : Precision::kFp32;
  g_device = parse_device(base.device);
  const Config c = prepare_run(base, DistEnv{});  // the layers auto resolves to here (fused on a CPU), as a run's
  at::manual_seed(1);
  GPT model(GPTOptions::from_config(c.model, c.speed));
  model->to(g_device);
  const int64_t B = c.train.batch_size, T = train_context(c);
  const at::Tensor x = at::randint(0, c.model.vocab_size, {B, T}, at::kLong).to(g_device);
  const at::Tensor y = at::randint(0, c.model.vocab_size, {B, T}, at::kLong).to(g_device);
  const Precision p = bf16 ? Precision::kBf16 : Precision::kFp32;
  const auto step = [&] {
    model->zero_grad();
    forward_backward(
        *model,
        [&](int64_t) {
          return Batch{x, y};
        },
        1, p, g_device);
  };
  step();  // warm-up: the allocator and the kernels' first calls
  const double step_ms = median_ms(reps, step);
  LayerStats stats(*model);
  stats.grad_jump();
  const double jump_ms = median_ms(reps * 4, [&] { stats.grad_jump(); });
  const double keep_ms = median_ms(reps * 4, [&] { stats.keep_weights(); });
  const at::Tensor first = x.narrow(0, 0, 1);
  const double report_ms = median_ms(reps,
                                     [&] {
                                       stats.keep_weights();
                                       Metrics m;
                                       stats.add_to(m, first);
                                     }) -
                           keep_ms;
  const double share = (jump_ms + (keep_ms + report_ms) / static_cast<double>(c.train.log_every)) / step_ms;
  std::printf(
      "%s, %s, %s layers, %d threads, %s batch %lld x %lld, log_every %lld: step %.1f ms | grad_jump %.3f ms | keep "
      "%.3f ms | "
      "report %.2f ms | share of a step %.2f%% (spike watch alone %.2f%%)\n",
      c.device.c_str(), bf16 ? "bf16" : "fp32", name_of(c.speed.layers).c_str(), at::get_num_threads(),
      c.model.preset.c_str(), static_cast<long long>(B), static_cast<long long>(T),
      static_cast<long long>(c.train.log_every), step_ms, jump_ms, keep_ms, report_ms, 100 * share,
      100 * jump_ms / step_ms);
  return 0;
}
