// The ATen side of the fused residual + LayerNorm (see residual_layernorm.h): an autograd function around the
// CUDA launchers; the CPU (and a build without CUDA) runs the reference.
#include "engine/torch/kernels/residual_layernorm.h"

#include "engine/torch/kernels/reference.h"

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/record_function.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/autograd.h>

#include "engine/base/util/error.h"
#include "engine/torch/kernels/cuda_launch.h"
#endif

namespace tokamak::kernels {

#ifdef TOKAMAK_WITH_CUDA
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

cuda::DType kind_of(at::ScalarType t) {
  if (t == at::kFloat) return cuda::DType::kFloat;
  if (t == at::kBFloat16) return cuda::DType::kBFloat16;
  throw Error("fused residual + LayerNorm: no CUDA kernel for this dtype", "use fp32 or bf16");
}

class ResidualLayerNormFunction : public torch::autograd::Function<ResidualLayerNormFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& r_in,
                               const at::Tensor& w_in, const at::Tensor& b_in) {
    RECORD_FUNCTION("tokamak::residual_layernorm", std::vector<c10::IValue>());  // names its kernel in profiles
    // One dtype for the kernel: the residual stream's (fp32 + bf16 under autocast gives fp32, as native's add).
    const at::ScalarType dtype = at::result_type(x_in, r_in);
    const int64_t C = x_in.size(-1), N = x_in.numel() / C;
    const c10::cuda::CUDAGuard device_guard(x_in.device());
    const at::Tensor x = x_in.to(dtype).contiguous(), r = r_in.to(dtype).contiguous();
    const at::Tensor w = w_in.to(dtype).contiguous(), b = b_in.to(dtype).contiguous();
    at::Tensor h = at::empty_like(x), y = at::empty_like(x);
    at::Tensor mean = at::empty({N}, x.options().dtype(at::kFloat)), rstd = at::empty_like(mean);
    cuda::residual_layernorm_forward(kind_of(dtype), x.data_ptr(), r.data_ptr(), w.data_ptr(), b.data_ptr(),
                                     h.data_ptr(), y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(), N, C,
                                     c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    ctx->save_for_backward({h, w, mean, rstd});
    ctx->saved_data["dtypes"] = std::vector<int64_t>{int64_t(x_in.scalar_type()), int64_t(r_in.scalar_type()),
                                                     int64_t(w_in.scalar_type()), int64_t(b_in.scalar_type())};
    return {h, y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_FUNCTION("tokamak::layernorm_backward", std::vector<c10::IValue>());
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &h = saved[0], &w = saved[1], &mean = saved[2], &rstd = saved[3];
    const std::vector<int64_t> dtypes = ctx->saved_data["dtypes"].toIntVector();
    const int64_t C = h.size(-1), N = h.numel() / C;
    const c10::cuda::CUDAGuard device_guard(h.device());
    // dh starts as the residual stream's own gradient and gets layer_norm's added in place.
    at::Tensor dh = grads[0].defined() ? grads[0].to(h.scalar_type()).contiguous().clone() : at::zeros_like(h);
    at::Tensor dw = at::zeros({C}, h.options().dtype(at::kFloat)), db = at::zeros_like(dw);
    if (grads[1].defined()) {
      const at::Tensor dy = grads[1].to(h.scalar_type()).contiguous();
      cuda::layernorm_backward(kind_of(h.scalar_type()), dy.data_ptr(), h.data_ptr(), w.data_ptr(),
                               mean.data_ptr<float>(), rstd.data_ptr<float>(), dh.data_ptr(), dw.data_ptr<float>(),
                               db.data_ptr<float>(), N, C, c10::cuda::getCurrentCUDAStream());
      C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    auto as = [&](const at::Tensor& t, int i) { return t.to(static_cast<at::ScalarType>(dtypes[i])); };
    return {as(dh, 0), as(dh, 1), as(dw, 2), as(db, 3)};
  }
};

// speed.fused_glue: x fp32 and the branch bf16 in, h fp32 and y bf16 out, no casts (see residual_layernorm_glue).
class ResidualLayerNormGlueFunction : public torch::autograd::Function<ResidualLayerNormGlueFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& r_in,
                               const at::Tensor& w_in, const at::Tensor& b_in) {
    RECORD_FUNCTION("tokamak::residual_layernorm", std::vector<c10::IValue>());
    // An output without a gradient stays undefined in backward: ln_f's stream is never used, and its gradient is
    // then no tensor of zeros to allocate, fill and read.
    ctx->set_materialize_grads(false);
    const int64_t C = x_in.size(-1), N = x_in.numel() / C;
    const c10::cuda::CUDAGuard device_guard(x_in.device());
    const at::Tensor x = x_in.contiguous(), r = r_in.contiguous(), w = w_in.contiguous(), b = b_in.contiguous();
    at::Tensor h = at::empty_like(x), y = at::empty_like(x, x.options().dtype(at::kBFloat16));
    at::Tensor mean = at::empty({N}, x.options()), rstd = at::empty_like(mean);
    cuda::residual_layernorm_forward_mixed(x.data_ptr<float>(), r.data_ptr(), w.data_ptr<float>(), b.data_ptr<float>(),
                                           h.data_ptr<float>(), y.data_ptr(), mean.data_ptr<float>(),
                                           rstd.data_ptr<float>(), N, C, c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    ctx->save_for_backward({h, w, mean, rstd});
    return {h, y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_FUNCTION("tokamak::layernorm_backward", std::vector<c10::IValue>());
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &h = saved[0], &w = saved[1], &mean = saved[2], &rstd = saved[3];
    const int64_t C = h.size(-1), N = h.numel() / C;
    const c10::cuda::CUDAGuard device_guard(h.device());
    if (!grads[1].defined()) {  // y unused: the residual stream's gradient flows on to x and the branch
      const at::Tensor dh = grads[0].defined() ? grads[0].to(at::kFloat) : at::zeros_like(h);
      return {dh, dh.to(at::kBFloat16), at::Tensor(), at::Tensor()};
    }
    const at::Tensor dy = grads[1].to(at::kBFloat16).contiguous();
    const at::Tensor dh_in = grads[0].defined() ? grads[0].to(at::kFloat).contiguous() : at::Tensor();
    at::Tensor dh = at::empty_like(h), dbranch = at::empty_like(h, h.options().dtype(at::kBFloat16));
    at::Tensor dw = at::zeros({C}, h.options()), db = at::zeros_like(dw);
    cuda::layernorm_backward_mixed(dy.data_ptr(), h.data_ptr<float>(), w.data_ptr<float>(), mean.data_ptr<float>(),
                                   rstd.data_ptr<float>(), dh_in.defined() ? dh_in.data_ptr<float>() : nullptr,
                                   dh.data_ptr<float>(), dbranch.data_ptr(), dw.data_ptr<float>(), db.data_ptr<float>(),
                                   N, C, c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {dh, dbranch, dw, db};
  }
};

// speed.fused_glue's LayerNorm alone: the same kernels with no branch (see layernorm_glue).
class LayerNormGlueFunction : public torch::autograd::Function<LayerNormGlueFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x_in, const at::Tensor& w_in,
                            const at::Tensor& b_in) {
    RECORD_FUNCTION("tokamak::layernorm", std::vector<c10::IValue>());
    const int64_t C = x_in.size(-1), N = x_in.numel() / C;
    const c10::cuda::CUDAGuard device_guard(x_in.device());
    const at::Tensor x = x_in.contiguous(), w = w_in.contiguous(), b = b_in.contiguous();
    at::Tensor y = at::empty_like(x, x.options().dtype(at::kBFloat16));
    at::Tensor mean = at::empty({N}, x.options()), rstd = at::empty_like(mean);
    cuda::residual_layernorm_forward_mixed(x.data_ptr<float>(), nullptr, w.data_ptr<float>(), b.data_ptr<float>(),
                                           nullptr, y.data_ptr(), mean.data_ptr<float>(), rstd.data_ptr<float>(), N, C,
                                           c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    ctx->save_for_backward({x, w, mean, rstd});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_FUNCTION("tokamak::layernorm_backward", std::vector<c10::IValue>());
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &mean = saved[2], &rstd = saved[3];
    const int64_t C = x.size(-1), N = x.numel() / C;
    const c10::cuda::CUDAGuard device_guard(x.device());
    const at::Tensor dy = grads[0].to(at::kBFloat16).contiguous();
    at::Tensor dx = at::empty_like(x), dw = at::zeros({C}, x.options()), db = at::zeros_like(dw);
    cuda::layernorm_backward_mixed(dy.data_ptr(), x.data_ptr<float>(), w.data_ptr<float>(), mean.data_ptr<float>(),
                                   rstd.data_ptr<float>(), nullptr, dx.data_ptr<float>(), nullptr, dw.data_ptr<float>(),
                                   db.data_ptr<float>(), N, C, c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {dx, dw, db};
  }
};

}  // namespace
#endif

#ifdef TOKAMAK_WITH_CUDA
// The glue's forward kernel loads 16 bytes at a time: a tensor it reads as it is (contiguous; any other is copied
// into a fresh allocation first) must start on a 16-byte boundary, which a view with a storage offset may not.
static bool aligned16(const at::Tensor& t) {
  return !t.is_contiguous() || reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0;
}
#endif

at::Tensor layernorm_glue(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
#ifdef TOKAMAK_WITH_CUDA
  const int64_t C = x.size(-1);
  if (x.is_cuda() && x.scalar_type() == at::kFloat && weight.defined() && bias.defined() &&
      weight.scalar_type() == at::kFloat && bias.scalar_type() == at::kFloat && C % 8 == 0 && C <= cuda::kMixedMaxC &&
      aligned16(x) && aligned16(weight) && aligned16(bias))
    return LayerNormGlueFunction::apply(x, weight, bias);
#endif
  return at::Tensor();
}

std::pair<at::Tensor, at::Tensor> residual_layernorm_glue(const at::Tensor& x, const at::Tensor& residual,
                                                          const at::Tensor& weight, const at::Tensor& bias) {
#ifdef TOKAMAK_WITH_CUDA
  const int64_t C = x.size(-1);
  if (x.is_cuda() && x.scalar_type() == at::kFloat && residual.scalar_type() == at::kBFloat16 &&
      weight.scalar_type() == at::kFloat && bias.scalar_type() == at::kFloat && x.sizes() == residual.sizes() &&
      C % 8 == 0 && C <= cuda::kMixedMaxC && aligned16(x) && aligned16(residual) && aligned16(weight) &&
      aligned16(bias)) {
    const variable_list out = ResidualLayerNormGlueFunction::apply(x, residual, weight, bias);
    return {out[0], out[1]};
  }
#endif
  return residual_layernorm(x, residual, weight, bias);
}

std::pair<at::Tensor, at::Tensor> residual_layernorm(const at::Tensor& x, const at::Tensor& residual,
                                                     const at::Tensor& weight, const at::Tensor& bias) {
#ifdef TOKAMAK_WITH_CUDA
  if (x.is_cuda()) {
    const variable_list out = ResidualLayerNormFunction::apply(x, residual, weight, bias);
    return {out[0], out[1]};
  }
#endif
  return residual_layernorm_reference(x, residual, weight, bias);
}

}  // namespace tokamak::kernels
