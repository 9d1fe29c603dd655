// The plain-ATen references (see reference.h).
#include "engine/torch/kernels/reference.h"

#include <ATen/ops/add.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>

#include <utility>

namespace tokamak::kernels {

at::Tensor classifier_reference(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                                int64_t vocab_size) {
  at::Tensor logits = at::linear(x, weight);  // (N, Vp)
  if (weight.size(0) > vocab_size) logits = logits.narrow(-1, 0, vocab_size);
  return at::cross_entropy_loss(logits.to(at::kFloat), targets);
}

std::pair<at::Tensor, at::Tensor> residual_layernorm_reference(const at::Tensor& x, const at::Tensor& residual,
                                                               const at::Tensor& weight, const at::Tensor& bias) {
  at::Tensor h = at::add(x, residual);
  return {h, at::layer_norm(h, {weight.size(0)}, weight, bias, 1e-5)};
}

at::Tensor bias_gelu_reference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  return at::gelu(at::linear(x, w, b), "tanh");
}

}  // namespace tokamak::kernels
