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

// speed.fused_glue: the same in the dtypes a block has under bf16 autocast, with no cast around the kernel — x (the
// residual stream) fp32 and the branch bf16 on CUDA give h fp32 and y bf16 (the next matmul's input), and backward
// writes the branch's bf16 gradient in the same pass. Any other dtypes, device or width take residual_layernorm.
std::pair<at::Tensor, at::Tensor> residual_layernorm_glue(const at::Tensor& x, const at::Tensor& residual,
                                                          const at::Tensor& weight, const at::Tensor& bias);

// speed.fused_glue's LayerNorm alone (ln_1, ln_f): x fp32 (the residual stream) on CUDA with fp32 weight and bias, a
// width that is a multiple of 8 up to 2,048 → y in bf16, the next matmul's input, with no cast around it. Undefined
// where it does not apply (the caller runs its usual LayerNorm).
at::Tensor layernorm_glue(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace tokamak::kernels
