#include "engine/torch/train/layer_stats.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <map>

#include "engine/base/run/layer_metrics.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {

LayerStats::LayerStats(GPTImpl& model) : model_(model) {
  std::map<std::string, int64_t> index;
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters()) {  // a tied head is wte's tensor: listed once, as emb
    params_.push_back(p.value());
    names.push_back(parameter_group(p.key()));
    if (!index.count(names.back())) index[names.back()] = 0, groups_.push_back(names.back());
  }
  std::stable_sort(groups_.begin(), groups_.end(), group_before);
  for (size_t g = 0; g < groups_.size(); ++g) index[groups_[g]] = static_cast<int64_t>(g);
  std::vector<int64_t> group_of;
  std::vector<float> numel(groups_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i) {
    group_of.push_back(index[names[i]]);
    numel[group_of.back()] += static_cast<float>(params_[i].numel());
  }
  const auto device = params_.front().device();
  group_of_ = at::tensor(group_of, at::kLong).to(device);
  numel_ = at::tensor(numel, at::kFloat).to(device);
}

at::Tensor LayerStats::sum_sq_by_group(const std::vector<at::Tensor>& tensors) const {
  // fp32 norms whatever the dtype: bf16 weights' squares would lose the small groups in the large.
  const at::Tensor norms = at::stack(at::_foreach_norm(tensors, 2, at::kFloat));
  return at::zeros({static_cast<int64_t>(groups_.size())}, norms.options()).index_add_(0, group_of_, norms.square());
}

std::vector<at::Tensor> LayerStats::grads() const {
  std::vector<at::Tensor> g;
  g.reserve(params_.size());
  for (const at::Tensor& p : params_) g.push_back(p.grad().defined() ? p.grad() : at::zeros({1}, p.options()));
  return g;
}

void LayerStats::keep_weights() {
  at::NoGradGuard no_grad;
  before_ = at::_foreach_add(params_, 0);  // a copy; params_ are leaves, so detached under no_grad
}

void LayerStats::add_to(Metrics& metrics, const at::Tensor& tokens) {
  at::NoGradGuard no_grad;
  const at::Tensor w_sq = sum_sq_by_group(params_);
  std::vector<at::Tensor> rows = {(w_sq / numel_).sqrt(), (sum_sq_by_group(grads()) / numel_).sqrt()};
  if (!before_.empty()) {
    at::_foreach_sub_(before_, params_);  // in place: -Δw, with no second copy
    rows.push_back((sum_sq_by_group(before_) / w_sq.clamp_min(1e-30)).sqrt());
    before_.clear();
  }
  GPTImpl::Probe probe;
  if (tokens.defined()) probe = model_.probe(tokens);
  const at::Tensor per_group = at::stack(rows).cpu();  // the one read: the report synchronised already
  const at::Tensor per_block = tokens.defined() ? at::stack({probe.act_rms, probe.attn_entropy}).cpu() : at::Tensor();
  const char* group_stats[] = {"w_rms", "g_rms", "update_ratio"};
  for (int64_t s = 0; s < per_group.size(0); ++s)
    for (size_t g = 0; g < groups_.size(); ++g)
      metrics.add(layer_metric(group_stats[s], groups_[g]), per_group[s][static_cast<int64_t>(g)].item<double>());
  if (!per_block.defined()) return;
  const char* block_stats[] = {"act_rms", "attn_entropy"};
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t b = 0; b < per_block.size(1); ++b)
      metrics.add(layer_metric(block_stats[s], "h" + std::to_string(b)), per_block[s][b].item<double>());
}

at::Tensor LayerStats::grad_jump() {
  at::NoGradGuard no_grad;
  const at::Tensor rms = (sum_sq_by_group(grads()) / numel_).sqrt();
  if (!grad_mean_.defined()) {
    grad_mean_ = rms.clone();
    return at::ones_like(rms);
  }
  const at::Tensor jump = rms / grad_mean_.clamp_min(1e-30);
  grad_mean_.lerp_(rms, 0.1);  // a running mean over about the last ten steps
  return jump;
}

std::pair<std::string, double> LayerStats::jumped_most(const at::Tensor& jump) const {
  const at::Tensor host = jump.to(at::kCPU, at::kFloat).contiguous();
  const float* v = host.data_ptr<float>();
  const int64_t n = std::min<int64_t>(host.numel(), static_cast<int64_t>(groups_.size()));
  if (n == 0) return {"", 0};
  const int64_t best = std::max_element(v, v + n) - v;
  return {groups_[best], v[best]};
}

}  // namespace tokamak
