// See loss_scaler.h.
#include "engine/torch/train/loss_scaler.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "engine/base/util/error.h"

namespace tokamak {

LossScaler::LossScaler(const LossScaleOptions& o, const c10::Device& device) : o_(o) {
  scale_ = at::full({1}, o.init, at::TensorOptions().device(device).dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, at::TensorOptions().device(device).dtype(at::kInt));
}

at::Tensor LossScaler::unscale(const std::vector<at::Tensor>& params) const {
  at::Tensor found_inf = at::zeros({1}, scale_.options());
  const at::Tensor inv = inv_scale();
  std::vector<at::Tensor> grads;
  for (const at::Tensor& p : params)
    if (p.grad().defined()) grads.push_back(p.grad());
  // The op takes the gradients of one device and dtype: fp32 master weights give fp32 gradients; a model that
  // keeps another dtype (none does today) would need one call a dtype.
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv);
  return found_inf;
}

// GradScaler's reciprocal: in double, then float, so the unscaled gradients are the same bits as PyTorch's.
at::Tensor LossScaler::inv_scale() const { return scale_.to(at::kDouble).reciprocal().to(at::kFloat); }

void LossScaler::update(const at::Tensor& found_inf) {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf, o_.growth, o_.backoff, o_.interval);
}

double LossScaler::scale_value() const { return scale_.item<double>(); }

std::string LossScaler::state_json() const {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%.9g", scale_.item<float>());  // 9 digits: a float32 read back exactly
  return nlohmann::json{{"scale", nlohmann::json::parse(scale)}, {"growth_tracker", growth_tracker_.item<int>()}}
      .dump();
}

void LossScaler::load_state_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("scale") || !j["scale"].is_number() || !j.contains("growth_tracker") ||
      !j["growth_tracker"].is_number_integer())
    throw Error("the checkpoint's loss scale is not readable ('" + text + "')",
                "resume from an earlier checkpoint, or start the run again");
  scale_.fill_(j["scale"].get<double>());
  growth_tracker_.fill_(j["growth_tracker"].get<int64_t>());
}

}  // namespace tokamak
