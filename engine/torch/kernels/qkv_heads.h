// speed.fused_glue: the attention's queries, keys and values as head views of c_attn's output, with a backward that
// writes their gradients straight into c_attn's output layout in one pass. Autograd's own way (split, view,
// transpose) takes each head gradient as the attention returns it, (B, H, T, D) contiguous, reshapes it to (B, T, C)
// — a transposing copy in ATen's generic strided kernel — and then concatenates the three into (B, T, 3C): four
// passes a block where one does.
#pragma once
#include <ATen/core/Tensor.h>

#include <array>

namespace tokamak::kernels {

// qkv (B, T, 3C) → {q, k, v}, each (B, H, T, D) with D = C / n_head: the same views as
// qkv.split(C, 2)[i].view({B, T, H, D}).transpose(1, 2), so the forward copies nothing.
std::array<at::Tensor, 3> qkv_heads(const at::Tensor& qkv, int64_t n_head);

// The backward alone: dqkv (B, T, 3C), contiguous, from the heads' gradients (B, H, T, D), any strides; an undefined
// one gives zeros. qkv_sizes and options are qkv's. One CUDA kernel where the rows, strides and pointers are 16-byte
// aligned; elsewhere ATen's strided copies into the slices (the reference).
at::Tensor qkv_heads_backward(const at::Tensor& dq, const at::Tensor& dk, const at::Tensor& dv,
                              at::IntArrayRef qkv_sizes, const at::TensorOptions& options, int64_t n_head);
at::Tensor qkv_heads_backward_reference(const at::Tensor& dq, const at::Tensor& dk, const at::Tensor& dv,
                                        at::IntArrayRef qkv_sizes, const at::TensorOptions& options, int64_t n_head);

}  // namespace tokamak::kernels
