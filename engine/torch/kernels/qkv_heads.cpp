// The ATen side of the heads' views and their one-pass backward (see qkv_heads.h).
#include "engine/torch/kernels/qkv_heads.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include "engine/base/util/error.h"

#ifdef TOKAMAK_WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "engine/torch/kernels/cuda_launch.h"
#endif

namespace tokamak::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void check_shape(at::IntArrayRef qkv, int64_t n_head) {
  if (qkv.size() != 3 || n_head < 1 || qkv[2] % (3 * n_head) != 0)
    throw Error("attention heads: qkv must be (B, T, 3C) with C a multiple of the " + std::to_string(n_head) + " heads",
                "this is a bug in the caller: pass c_attn's output and model.n_head");
}

// (B, H, T, D) slice s of dqkv viewed as (B, T, 3, H, D): where head gradient s goes.
at::Tensor slot(const at::Tensor& dqkv, int64_t n_head, int64_t s) {
  const int64_t B = dqkv.size(0), T = dqkv.size(1), C = dqkv.size(2) / 3;
  return dqkv.view({B, T, 3, n_head, C / n_head}).select(2, s).transpose(1, 2);
}

#ifdef TOKAMAK_WITH_CUDA
// True where the kernel's 16-byte moves are aligned in the heads' gradients: strides and pointers (dqkv is a fresh
// allocation, aligned far beyond 16 bytes).
bool kernel_fits(const at::TensorOptions& options, const std::array<const at::Tensor*, 3>& heads) {
  if (!options.device().is_cuda()) return false;
  for (const at::Tensor* g : heads) {
    if (!g->defined()) continue;
    if (!g->is_cuda() || g->scalar_type() != options.dtype().toScalarType() || g->stride(3) != 1) return false;
    if (reinterpret_cast<uintptr_t>(g->data_ptr()) % 16 != 0) return false;
    for (int d = 0; d < 3; ++d)
      if (g->stride(d) * static_cast<int64_t>(g->element_size()) % 16 != 0) return false;
  }
  return true;
}
#endif

class QkvHeadsFunction : public torch::autograd::Function<QkvHeadsFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& qkv, int64_t n_head) {
    ctx->set_materialize_grads(false);  // a head without a gradient is written as zeros, not read as them
    ctx->saved_data["n_head"] = n_head;
    ctx->saved_data["like"] = at::empty({0}, qkv.options());  // dqkv's dtype and device, without holding qkv
    ctx->saved_data["sizes"] = qkv.sizes().vec();
    const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3;
    const at::Tensor heads = qkv.view({B, T, 3, n_head, C / n_head});
    return {heads.select(2, 0).transpose(1, 2), heads.select(2, 1).transpose(1, 2), heads.select(2, 2).transpose(1, 2)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const int64_t n_head = ctx->saved_data["n_head"].toInt();
    const std::vector<int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
    const at::TensorOptions options = ctx->saved_data["like"].toTensor().options();
    return {qkv_heads_backward(grads[0], grads[1], grads[2], sizes, options, n_head), at::Tensor()};
  }
};

}  // namespace

std::array<at::Tensor, 3> qkv_heads(const at::Tensor& qkv, int64_t n_head) {
  check_shape(qkv.sizes(), n_head);
  const variable_list out = QkvHeadsFunction::apply(qkv.contiguous(), n_head);  // c_attn's output already is
  return {out[0], out[1], out[2]};
}

at::Tensor qkv_heads_backward_reference(const at::Tensor& dq, const at::Tensor& dk, const at::Tensor& dv,
                                        at::IntArrayRef qkv_sizes, const at::TensorOptions& options, int64_t n_head) {
  check_shape(qkv_sizes, n_head);
  at::Tensor dqkv = at::empty(qkv_sizes, options);
  const std::array<const at::Tensor*, 3> heads = {&dq, &dk, &dv};
  for (int64_t s = 0; s < 3; ++s) {
    at::Tensor dst = slot(dqkv, n_head, s);
    if (heads[s]->defined()) dst.copy_(*heads[s]);
    else dst.zero_();
  }
  return dqkv;
}

at::Tensor qkv_heads_backward(const at::Tensor& dq, const at::Tensor& dk, const at::Tensor& dv,
                              at::IntArrayRef qkv_sizes, const at::TensorOptions& options, int64_t n_head) {
  RECORD_FUNCTION("tokamak::qkv_heads_backward", std::vector<c10::IValue>());  // names its kernel in profiles
  check_shape(qkv_sizes, n_head);
#ifdef TOKAMAK_WITH_CUDA
  const int64_t B = qkv_sizes[0], T = qkv_sizes[1], C = qkv_sizes[2] / 3;
  const int64_t row_bytes = C / n_head * static_cast<int64_t>(options.dtype().itemsize());
  const std::array<const at::Tensor*, 3> heads = {&dq, &dk, &dv};
  if (row_bytes % 16 == 0 && kernel_fits(options, heads)) {
    at::Tensor dqkv = at::empty(qkv_sizes, options);
    const c10::cuda::CUDAGuard device_guard(dqkv.device());
    cuda::HeadSources src{};
    for (int s = 0; s < 3; ++s) {
      const at::Tensor& g = *heads[s];
      if (!g.defined()) continue;
      const int64_t elt = g.element_size();
      src.data[s] = g.data_ptr();
      src.stride_b[s] = g.stride(0) * elt, src.stride_h[s] = g.stride(1) * elt, src.stride_t[s] = g.stride(2) * elt;
    }
    cuda::heads_to_qkv(src, dqkv.data_ptr(), B, T, n_head, row_bytes, c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return dqkv;
  }
#endif
  return qkv_heads_backward_reference(dq, dk, dv, qkv_sizes, options, n_head);
}

}  // namespace tokamak::kernels
