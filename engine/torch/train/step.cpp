// Forward/backward of one step and evaluation, with the precision switches (see step.h).
#include "engine/torch/train/step.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>

#include "engine/torch/parallel/reducer.h"
#include "engine/torch/metrics/step_profile.h"
#include "engine/torch/model/autocast.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/train/math_mode.h"
#include "engine/base/util/error.h"

namespace tokamak {

Precision parse_precision(const std::string& name) {
  return parse_choice(precision_choices(), "speed.precision", name);
}

void apply_math_mode(Precision precision, SdpaBackend sdpa_backend) {
  at::Context& ctx = at::globalContext();
  const bool tf32 = precision == Precision::kTf32;
  ctx.setAllowTF32CuBLAS(tf32);
  ctx.setAllowTF32CuDNN(tf32);
  // The flags are process-wide and a bench runs many configs in one process: "auto" restores LibTorch's own
  // defaults (read once, before anything changed them); a named backend is the only one left enabled.
  struct Defaults {
    bool flash, efficient, cudnn, math;
  };
  static const Defaults defaults{ctx.userEnabledFlashSDP(), ctx.userEnabledMemEfficientSDP(), ctx.userEnabledCuDNNSDP(),
                                 ctx.userEnabledMathSDP()};
  const SdpaBackend b = require_implemented(sdpa_backend_choices(), "speed.sdpa_backend", sdpa_backend);
  const bool all = b == SdpaBackend::kAuto;
  ctx.setSDPUseFlash(all ? defaults.flash : b == SdpaBackend::kFlash);
  ctx.setSDPUseMemEfficient(all ? defaults.efficient : b == SdpaBackend::kEfficient);
  ctx.setSDPUseCuDNN(all ? defaults.cudnn : b == SdpaBackend::kCudnn);
  ctx.setSDPUseMath(all ? defaults.math : b == SdpaBackend::kMath);
}

StepOutput forward_backward(GPTImpl& model, const std::function<Batch(int64_t)>& next_batch, int64_t micro_steps,
                            Precision precision, const c10::Device& device, const at::Tensor& loss_scale,
                            GradReducer* reducer, StepProfile* profile) {
  const auto lap = [profile](Phase p) {
    if (profile) profile->lap(p);
  };
  StepOutput out;
  out.loss = at::zeros({}, at::TensorOptions().device(device).dtype(at::kFloat));
  lap(Phase::kOther);                       // what the caller did since the step began (zero_grad)
  const ActiveStepProfile active(profile);  // the model laps the fused classifier as the head
  for (int64_t micro = 0; micro < micro_steps; ++micro) {
    Batch batch = next_batch(micro);
    lap(Phase::kData);
    at::Tensor loss;
    {
      AutocastGuard autocast(device.type(), uses_autocast(precision), autocast_dtype(precision));
      loss = model.forward(batch.inputs, batch.targets).loss / static_cast<double>(micro_steps);
    }
    out.loss.add_(loss.detach().to(at::kFloat));
    lap(Phase::kForward);
    if (reducer) reducer->prepare(micro + 1 == micro_steps, /*timed=*/profile != nullptr);
    (loss_scale.defined() ? loss * loss_scale : loss).backward();
    lap(Phase::kBackward);  // with a reducer, the all-reduce of the buckets that were ready during it included
  }
  if (reducer) {
    reducer->finish();
    lap(Phase::kAllreduce);  // the all-reduce backward could not hide
  }
  return out;
}

double evaluate(GPTImpl& model, const std::function<Batch(int64_t)>& next_batch, int64_t count, Precision precision,
                const c10::Device& device, const std::function<void(int64_t done)>& on_batch) {
  const bool was_training = model.is_training();
  model.eval();
  at::NoGradGuard no_grad;
  auto total = at::zeros({}, at::TensorOptions().device(device).dtype(at::kFloat));
  for (int64_t i = 0; i < count; ++i) {
    Batch batch = next_batch(i);
    AutocastGuard autocast(device.type(), uses_autocast(precision), autocast_dtype(precision));
    total.add_(model.forward(batch.inputs, batch.targets).loss.to(at::kFloat));
    if (on_batch) on_batch(i + 1);  // no sync: on a GPU the launch queue's bound keeps this near the work done
  }
  if (was_training) model.train();
  return total.item<double>() / static_cast<double>(count);
}

}  // namespace tokamak
