// The MLP's first half, gelu_tanh(x @ weight^T + bias). On CUDA: cuBLASLt's bias + GELU epilogue
// (at::_addmm_activation) when no gradient is wanted; in training addmm + gelu forward, and backward through
// our kernel that fuses the GELU's gradient with the bias gradient (bias_gelu.cu). Elsewhere the reference.
#pragma once
#include <ATen/core/Tensor.h>

#include <optional>

namespace tokamak::kernels {

// x: (..., C_in); weight: (C_out, C_in); bias: (C_out,). Returns (..., C_out).
// out_of_place (speed.fused_glue): in bf16 with a width that is a multiple of 8, the backward writes the
// pre-activation's gradient into a new tensor with 16-byte loads instead of cloning the incoming one first.
at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool out_of_place = false);

// The no-gradient path on CUDA (evaluation, activation checkpointing's first forward): cuBLASLt's bias + GELU
// epilogue (at::_addmm_activation) on x2 (N, C_in), its three inputs cast to one dtype: autocast_dtype when autocast
// is on (CUDA autocast does not cover this op), else x2's. Runs on any device (the CPU tests call it).
at::Tensor bias_gelu_no_grad(const at::Tensor& x2, const at::Tensor& weight, const at::Tensor& bias,
                             std::optional<at::ScalarType> autocast_dtype);

// ATen operators the fused layers call with inputs of mixed dtypes, relying on CUDA autocast to cast them (the
// autograd functions' forwards, which run with autocast on). Every other operator they call is given inputs of
// one dtype by the code itself. test_autocast_gaps checks each of these is on CUDA autocast's list.
inline constexpr const char* kAutocastReliantOps[] = {"aten::addmm"};

}  // namespace tokamak::kernels
