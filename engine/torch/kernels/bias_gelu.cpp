// The ATen side of bias + GELU (see bias_gelu.h): an autograd function around cuBLAS(Lt) and the fused GELU +
// bias-gradient kernel; the CPU (and a build without CUDA) runs the reference.
#include "engine/torch/kernels/bias_gelu.h"

#include "engine/torch/kernels/reference.h"

#include <ATen/ops/_addmm_activation.h>

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/mm.h>
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

class BiasGeluFunction : public torch::autograd::Function<BiasGeluFunction> {
 public:
  // x2: (N, C_in). Autocast stays on here, so addmm runs in its dtype as native's linear does.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x2, const at::Tensor& w, const at::Tensor& b,
                            bool out_of_place) {
    const at::Tensor pre = at::addmm(b, x2, w.t());  // (N, C_out): the bias in cuBLASLt's epilogue
    ctx->save_for_backward({x2, w, pre});
    ctx->saved_data["bias_dtype"] = int64_t(b.scalar_type());
    ctx->saved_data["out_of_place"] = out_of_place;
    return at::gelu(pre, "tanh");
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_FUNCTION("tokamak::gelu_backward_bias", std::vector<c10::IValue>());     // names its kernel in profiles
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);  // dtypes are explicit here
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x2 = saved[0], &w = saved[1], &pre = saved[2];
    const at::ScalarType dtype = pre.scalar_type();
    if (dtype != at::kFloat && dtype != at::kBFloat16)
      throw Error("fused bias + GELU: no CUDA kernel for this dtype", "use fp32 or bf16");
    const c10::cuda::CUDAGuard device_guard(pre.device());
    const int64_t N = pre.size(0), C = pre.size(1);
    at::Tensor db = at::zeros({C}, pre.options().dtype(at::kFloat));
    at::Tensor d;
    const at::Tensor g = grads[0].to(dtype).contiguous();
    // The out-of-place kernel loads 16 bytes at a time and gives each 64 rows a block of grid.y (at most 65,535).
    const auto aligned = [](const at::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0; };
    if (ctx->saved_data["out_of_place"].toBool() && dtype == at::kBFloat16 && C % 8 == 0 && pre.is_contiguous() &&
        aligned(g) && aligned(pre) && (N + 63) / 64 <= 65535) {
      d = at::empty_like(pre);
      cuda::gelu_backward_bias_out(g.data_ptr(), pre.data_ptr(), d.data_ptr(), db.data_ptr<float>(), N, C,
                                   c10::cuda::getCurrentCUDAStream());
    } else {
      d = g.clone();  // becomes d pre in place
      cuda::gelu_backward_bias(dtype == at::kBFloat16 ? cuda::DType::kBFloat16 : cuda::DType::kFloat, d.data_ptr(),
                               pre.data_ptr(), db.data_ptr<float>(), N, C, c10::cuda::getCurrentCUDAStream());
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    const at::Tensor dx = at::mm(d, w.to(dtype)).to(x2.scalar_type());
    const at::Tensor dw = at::mm(d.t(), x2.to(dtype)).to(w.scalar_type());
    return {dx, dw, db.to(static_cast<at::ScalarType>(ctx->saved_data["bias_dtype"].toInt())), at::Tensor()};
  }
};

}  // namespace
#endif

at::Tensor bias_gelu_no_grad(const at::Tensor& x2, const at::Tensor& weight, const at::Tensor& bias,
                             std::optional<at::ScalarType> autocast_dtype) {
  const at::ScalarType dtype = autocast_dtype.value_or(x2.scalar_type());
  return at::_addmm_activation(bias.to(dtype), x2.to(dtype), weight.to(dtype).t(), 1, 1, /*use_gelu=*/true);
}

at::Tensor bias_gelu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool out_of_place) {
#ifdef TOKAMAK_WITH_CUDA
  if (x.is_cuda()) {
    auto shape = x.sizes().vec();
    shape.back() = weight.size(0);
    const at::Tensor x2 = x.reshape({-1, x.size(-1)});
    const bool with_grad =
        at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad() || bias.requires_grad());
    // CUDA autocast's lower-precision list does not hold _addmm_activation (the CPU's does): under bf16 autocast the
    // op would get the glue's bf16 activation beside fp32 weights and throw, or, given fp32 activations (activation
    // checkpointing's forward without the glue), run its GEMM in plain fp32. So the dtype is chosen here.
    std::optional<at::ScalarType> autocast_dtype;
    if (at::autocast::is_autocast_enabled(at::kCUDA)) autocast_dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    if (!with_grad) return bias_gelu_no_grad(x2, weight, bias, autocast_dtype).view(shape);
    return BiasGeluFunction::apply(x2, weight, bias, out_of_place).view(shape);
  }
#endif
  return bias_gelu_reference(x, weight, bias);
}

}  // namespace tokamak::kernels
