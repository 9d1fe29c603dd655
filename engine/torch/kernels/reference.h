// Plain-ATen references that the fused kernels must match (the parity tests in tests/test_kernels.cpp) and
// that the lab programs in experiments/kernels/ time them against. They are what the "native" layers compute.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace tokamak::kernels {

// linear(x, weight) narrowed to the first vocab_size columns, then mean cross-entropy (ignore_index -100),
// in fp32: the model's head and loss with speed.layers=native. x: (N, C); weight: (Vp, C); targets: (N,).
at::Tensor classifier_reference(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                                int64_t vocab_size);

// h = x + residual; y = layer_norm(h) (eps 1e-5). Returns {h, y}, both (N, C).
std::pair<at::Tensor, at::Tensor> residual_layernorm_reference(const at::Tensor& x, const at::Tensor& residual,
                                                               const at::Tensor& weight, const at::Tensor& bias);

// gelu_tanh(x @ w^T + b): the MLP's first half. x: (N, C); w: (4C, C); b: (4C,).
at::Tensor bias_gelu_reference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

}  // namespace tokamak::kernels
