// The MLP's first half, gelu_tanh(x @ weight^T + bias). On CUDA: cuBLASLt's bias + GELU epilogue
// (at::_addmm_activation) when no gradient is wanted; in training addmm + gelu forward, and backward through
// our kernel that fuses the GELU's gradient with the bias gradient (bias_gelu.cu). Elsewhere the reference.
#pragma once
#include <ATen/core/Tensor.h>

namespace tokamak::kernels {

// x: (..., C_in); weight: (C_out, C_in); bias: (C_out,). Returns (..., C_out).
// out_of_place (speed.fused_glue): in bf16 with a width that is a multiple of 8, the backward writes the
// pre-activation's gradient into a new tensor with 16-byte loads instead of cloning the incoming one first.
at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool out_of_place = false);

}  // namespace tokamak::kernels
