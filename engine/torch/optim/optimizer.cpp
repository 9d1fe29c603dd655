// AdamW, gradient clipping and the learning-rate schedule (see optimizer.h).
#include "engine/torch/optim/optimizer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <cmath>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/util/error.h"

namespace tokamak {

double adamw_lr_scale(const std::string& name, const AdamWOptions& o) {
  if (name == "lm_head") return o.head_lr_scale;
  if (name == "wte.weight" || name == "wpe.weight" || name.rfind("value_embeds.", 0) == 0) return o.embed_lr_scale;
  return 1;
}

AdamW::AdamW(const std::vector<std::pair<std::string, at::Tensor>>& params, const AdamWOptions& options)
    : options_(options) {
  for (const auto& [name, p] : params)
    if (p.requires_grad()) add({name, p, at::Tensor(), p.dim() >= 2, adamw_lr_scale(name, options)});
}

AdamW::AdamW(const std::vector<AdamWSlot>& slots, const AdamWOptions& options) : options_(options) {
  for (const AdamWSlot& s : slots) add(s);
}

void AdamW::add(const AdamWSlot& s) {
  // One group per (weight decay, lr): decayed 2-D weights, not decayed biases and norms, and groups of their own
  // for a head or embeddings with their own lr (optimizer.head_lr, optimizer.embed_lr); each is one fused kernel call.
  const double decay = s.decay ? options_.weight_decay : 0.0;
  Group* found = nullptr;
  for (Group& g : groups_)
    if (g.weight_decay == decay && g.lr_scale == s.lr_scale) found = &g;
  if (!found) {
    groups_.emplace_back();
    found = &groups_.back();
    found->weight_decay = decay, found->lr_scale = s.lr_scale;
  }
  Group& g = *found;
  g.names.push_back(s.name);
  g.params.push_back(s.param);
  g.grads.push_back(s.grad);
  g.exp_avg.push_back(at::zeros_like(s.param, at::MemoryFormat::Preserve));
  g.exp_avg_sq.push_back(at::zeros_like(s.param, at::MemoryFormat::Preserve));
  g.steps.push_back(at::zeros({}, s.param.options().dtype(at::kFloat)));
}

void AdamW::zero_grad() {
  for (Group& g : groups_)
    for (at::Tensor& p : g.params) p.mutable_grad() = at::Tensor();
}

double fused_adamw_lr(double lr, double lr_scale) {
  return static_cast<double>(static_cast<float>(lr) * static_cast<float>(lr_scale));
}

void AdamW::step(double lr, const at::Tensor& found_inf) {
  ++step_;
  for (Group& g : groups_) {
    if (g.params.empty()) continue;
    if (options_.fused) step_fused(g, fused_adamw_lr(lr, g.lr_scale), found_inf);
    else step_loop(g, lr * g.lr_scale);
  }
}

void Optimizer::step_device_lr(const at::Tensor&, const at::Tensor&) {
  throw Error("this optimizer takes its learning rate from the host at every step, so a CUDA graph cannot replay it",
              "set optimizer.name=adamw with speed.fused_adamw=true, or speed.cuda_graphs=false");
}

void AdamW::step_device_lr(const at::Tensor& lr, const at::Tensor& found_inf) {
  if (!options_.fused)
    throw Error("AdamW's loop computes its bias correction on the host at every step, so a CUDA graph cannot replay it",
                "set speed.fused_adamw=true, or speed.cuda_graphs=false");
  ++step_;
  for (Group& g : groups_)
    if (!g.params.empty()) step_fused(g, g.lr_scale == 1 ? lr : lr * g.lr_scale, found_inf);
}

void AdamW::step_loop(Group& g, double lr) {
  const double bc1 = 1.0 - std::pow(options_.beta1, static_cast<double>(step_));
  const double bc2 = 1.0 - std::pow(options_.beta2, static_cast<double>(step_));
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < g.params.size(); ++i) {
    at::Tensor& p = g.params[i];
    const at::Tensor grad = g.grads[i].defined() ? g.grads[i] : p.grad();
    if (!grad.defined()) continue;
    g.steps[i].add_(1);
    if (g.weight_decay != 0) p.mul_(1.0 - lr * g.weight_decay);
    g.exp_avg[i].lerp_(grad, 1.0 - options_.beta1);
    g.exp_avg_sq[i].mul_(options_.beta2).addcmul_(grad, grad, 1.0 - options_.beta2);
    auto denom = (g.exp_avg_sq[i].sqrt() / std::sqrt(bc2)).add_(options_.eps);
    p.addcdiv_(g.exp_avg[i], denom, -lr / bc1);
  }
}

void AdamW::step_fused(Group& g, const std::variant<double, at::Tensor>& lr, const at::Tensor& found_inf) {
  std::vector<at::Tensor> grads;
  grads.reserve(g.params.size());
  for (size_t i = 0; i < g.params.size(); ++i) {
    const at::Tensor grad = g.grads[i].defined() ? g.grads[i] : g.params[i].grad();
    if (!grad.defined())
      throw Error("fused AdamW needs a gradient for every parameter", "turn speed.fused_adamw off for this model");
    grads.push_back(grad);
  }
  at::NoGradGuard no_grad;
  // The kernel reads the step counters but does not advance them (PyTorch's fused path adds 1 first).
  at::_foreach_add_(g.steps, 1);
  std::optional<at::Tensor> inf;
  if (found_inf.defined()) inf = found_inf;
  if (const double* host = std::get_if<double>(&lr))
    at::_fused_adamw_(g.params, grads, g.exp_avg, g.exp_avg_sq, /*max_exp_avg_sqs=*/{}, g.steps, *host, options_.beta1,
                      options_.beta2, g.weight_decay, options_.eps, /*amsgrad=*/false, /*maximize=*/false,
                      /*grad_scale=*/std::nullopt, inf);
  else
    at::_fused_adamw_(g.params, grads, g.exp_avg, g.exp_avg_sq, /*max_exp_avg_sqs=*/{}, g.steps,
                      std::get<at::Tensor>(lr), options_.beta1, options_.beta2, g.weight_decay, options_.eps,
                      /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/std::nullopt, inf);
  // A skipped update must not advance the bias correction either (as PyTorch's _fused_adamw does).
  if (inf) at::_foreach_sub_(g.steps, std::vector<at::Tensor>(g.steps.size(), *inf));
}

void AdamW::for_each_state(const StateVisitor& visit) {
  for (Group& g : groups_)
    for (size_t i = 0; i < g.params.size(); ++i) visit(g.names[i], g.exp_avg[i], g.exp_avg_sq[i], g.steps[i]);
}

at::Tensor clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm) {
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  return clip_gradients(grads, max_norm);
}

at::Tensor clip_gradients(const std::vector<at::Tensor>& grads, double max_norm,
                          const std::function<void(at::Tensor&)>& sum_of_squares) {
  if (grads.empty() && !sum_of_squares) return at::zeros({});
  at::NoGradGuard no_grad;
  // Norms in fp32 whatever the gradient dtype, so bf16 gradients do not overflow the sum of squares.
  at::Tensor total;
  if (!sum_of_squares) {
    total = at::linalg_vector_norm(at::stack(at::_foreach_norm(grads, 2, at::kFloat)), 2);
  } else {
    at::Tensor sq =
        grads.empty()
            ? at::zeros({1}, at::kFloat)
            : at::linalg_vector_norm(at::stack(at::_foreach_norm(grads, 2, at::kFloat)), 2).square().reshape({1});
    sum_of_squares(sq);
    total = sq.sqrt().reshape({});
  }
  if (max_norm > 0) {
    auto coef = (max_norm / (total + 1e-6)).clamp_max(1.0);
    at::_foreach_mul_(grads, coef);
  }
  return total;
}

double learning_rate(const Config& c, int64_t step) {
  const double lr = c.optimizer.lr;
  const ScheduleConfig& s = c.schedule;
  const int64_t steps = c.train.steps;
  if (step < s.warmup_steps) return lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  const double min_lr = lr * s.min_lr_ratio;
  if (require_implemented(schedule_choices(), "schedule.name", s.name) == ScheduleKind::kWsd) {
    // The decay's steps are the last ceil(fraction · steps) (at least one) and never reach into the warm-up;
    // its last step (steps - 1) lands on min_lr, as the cosine's does.
    const int64_t decay = std::min(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(s.decay_fraction * steps))),
                                   std::max<int64_t>(1, steps - s.warmup_steps));
    const int64_t start = steps - decay;  // first step below the peak
    if (step < start) return lr;
    const double progress = std::min(1.0, static_cast<double>(step - start + 1) / static_cast<double>(decay));
    return lr + progress * (min_lr - lr);
  }
  const int64_t decay_steps = std::max<int64_t>(1, steps - 1 - s.warmup_steps);
  const double progress = std::min(1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(decay_steps));
  return min_lr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (lr - min_lr);
}

}  // namespace tokamak
