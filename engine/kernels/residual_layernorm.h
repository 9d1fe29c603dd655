// Fused residual add + LayerNorm: h = x + residual (the new residual stream) and y = layer_norm(h), with one
// CUDA kernel forward and one backward (residual_layernorm.cu); elsewhere the plain-ATen reference
// (reference.h). Shapes (..., C); differentiable in all four inputs.
#pragma once
#include <ATen/core/Tensor.h>

#include <utility>

namespace tokamak::kernels {

// Returns {h, y}.
std::pair<at::Tensor, at::Tensor> residual_layernorm(const at::Tensor& x, const at::Tensor& residual,
                                                     const at::Tensor& weight, const at::Tensor& bias);

}  // namespace tokamak::kernels
