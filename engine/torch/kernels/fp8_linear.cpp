// speed.fp8's linear layer (see fp8_linear.h): tensorwise scales, the fp8 casts, and an autograd function whose
// forward and backward matmuls are at::_scaled_mm.
#include "engine/torch/kernels/fp8_linear.h"

#include <ATen/ops/_scaled_mm.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <cmath>

#include "engine/base/util/error.h"

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "engine/torch/kernels/cuda_launch.h"
#endif

namespace tokamak::kernels {

double fp8_max(at::ScalarType fp8) {
  if (fp8 == at::kFloat8_e4m3fn) return kE4m3Max;
  if (fp8 == at::kFloat8_e5m2) return kE5m2Max;
  throw Error(std::string("fp8: no scale for dtype ") + c10::toString(fp8), "use float8_e4m3fn or float8_e5m2");
}

at::Tensor fp8_scale(const at::Tensor& x, at::ScalarType fp8) {
  // amax in fp32 whatever x's dtype, as the infinity norm: one reading pass, no |x| tensor. The floor keeps a zero
  // tensor's scale finite (448 / 1e-12 fits fp32).
  const at::Tensor amax = at::linalg_vector_norm(x, INFINITY, std::nullopt, false, at::kFloat);
  return at::clamp_min(amax, kFp8AmaxFloor).reciprocal().mul_(fp8_max(fp8));
}

Fp8Tensor quantize_fp8(const at::Tensor& x, at::ScalarType fp8) {
  RECORD_FUNCTION("tokamak::fp8_cast", std::vector<c10::IValue>());  // `bench --kernels` counts it as a cast
  at::Tensor scale = fp8_scale(x, fp8);
  const double top = fp8_max(fp8);
#ifdef TOKAMAK_WITH_CUDA
  const at::ScalarType dtype = x.scalar_type();
  if (x.is_cuda() && x.is_contiguous() && (dtype == at::kFloat || dtype == at::kBFloat16)) {
    // One pass: scaled, rounded and saturated in the conversion (fp8_cast.cu).
    const c10::cuda::CUDAGuard device_guard(x.device());
    at::Tensor data = at::empty(x.sizes(), x.options().dtype(fp8));
    cuda::scale_cast_fp8(dtype == at::kBFloat16 ? cuda::DType::kBFloat16 : cuda::DType::kFloat, x.data_ptr(),
                         scale.data_ptr<float>(), data.data_ptr(), x.numel(), fp8 == at::kFloat8_e4m3fn,
                         c10::cuda::getCurrentCUDAStream());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return {data, scale};
  }
#endif
  // Elsewhere (the CPU) in ATen: x · scale may round just past the largest value (amax · top / amax, rounded in x's
  // dtype); clamped, it casts to the largest value instead of NaN (ATen's cast does not saturate). A bf16 x is
  // scaled in bf16: one more rounding (2^-9) before the fp8 one, where an fp32 copy would cost a pass of its own.
  at::Tensor data = x.mul(scale).clamp_(-top, top).to(fp8);
  return {data, scale};
}

at::Tensor dequantize_fp8(const Fp8Tensor& q, at::ScalarType dtype) {
  return q.data.to(at::kFloat).div(q.scale).to(dtype);
}

std::string fp8_matmul_problem(const c10::Device& device) {
  if (device.is_cpu()) return "";  // LibTorch's CPU _scaled_mm serves (2.11: tried, e4m3 and e5m2 operands)
#ifdef TOKAMAK_WITH_CUDA
  if (device.is_cuda()) {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
    if (p->major > 8 || (p->major == 8 && p->minor >= 9)) return "";
    return "speed.fp8 needs FP8 tensor cores (compute capability 8.9 or later: Ada, Hopper, Blackwell), but " +
           device.str() + " (" + p->name + ") is " + std::to_string(p->major) + "." + std::to_string(p->minor) +
           ": set speed.fp8=false";
  }
#endif
  return "speed.fp8 has no fp8 matmul on " + device.str() + ": set speed.fp8=false";
}

bool fp8_linear_fits(const at::Tensor& x, const at::Tensor& weight) {
  if (x.dim() < 1 || weight.dim() != 2) return false;
  const int64_t rows = x.numel() / std::max<int64_t>(1, x.size(-1));
  return x.numel() > 0 && rows % 16 == 0 && weight.size(0) % 16 == 0 && weight.size(1) % 16 == 0;
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// _scaled_mm's layout: the first operand row-major, the second column-major (cuBLASLt's fp8 GEMM is "TN" only).
at::Tensor column_major(const at::Tensor& m) { return m.t().contiguous().t(); }

class Fp8LinearFunction : public torch::autograd::Function<Fp8LinearFunction> {
 public:
  // x2 (M, K), w (N, K), b (N,) or undefined → (M, N) bf16.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x2, const at::Tensor& w, const at::Tensor& b) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);  // dtypes are explicit here
    const Fp8Tensor xq = quantize_fp8(x2, at::kFloat8_e4m3fn), wq = quantize_fp8(w, at::kFloat8_e4m3fn);
    // w (N, K) row-major is w^T (K, N) column-major, as _scaled_mm wants its second operand; the bias in bf16 (as
    // autocast's linear has it) in the GEMM's epilogue, not a pass of its own. Fast accumulation in the forward only,
    // as torchao's default: the gradients keep the accurate one.
    const std::optional<at::Tensor> bias = b.defined() ? std::optional<at::Tensor>(b.to(at::kBFloat16)) : std::nullopt;
    const at::Tensor y = at::_scaled_mm(xq.data, wq.data.t(), xq.scale.reciprocal(), wq.scale.reciprocal(), bias,
                                        std::nullopt, at::kBFloat16, /*use_fast_accum=*/true);
    ctx->save_for_backward({xq.data, xq.scale, wq.data, wq.scale});
    ctx->saved_data["x_dtype"] = int64_t(x2.scalar_type());
    ctx->saved_data["w_dtype"] = int64_t(w.scalar_type());
    ctx->saved_data["b_dtype"] = int64_t(b.defined() ? b.scalar_type() : at::kFloat);
    ctx->saved_data["has_bias"] = b.defined();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    RECORD_FUNCTION("tokamak::fp8_linear_backward", std::vector<c10::IValue>());
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x8 = saved[0], &xs = saved[1], &w8 = saved[2], &ws = saved[3];
    const at::Tensor g = grads[0].contiguous();  // (M, N)
    const Fp8Tensor gq = quantize_fp8(g, at::kFloat8_e5m2);
    const at::Tensor g_inv = gq.scale.reciprocal();
    // dx (M, K) = g (M, N) @ w (N, K): w as the column-major second operand.
    const at::Tensor dx =
        at::_scaled_mm(gq.data, column_major(w8), g_inv, ws.reciprocal(), std::nullopt, std::nullopt, at::kBFloat16);
    // dw (N, K) = g^T (N, M) @ x (M, K), in fp32 for the master weight.
    const at::Tensor dw = at::_scaled_mm(gq.data.t().contiguous(), column_major(x8), g_inv, xs.reciprocal(),
                                         std::nullopt, std::nullopt, at::kFloat);
    at::Tensor db;
    if (ctx->saved_data["has_bias"].toBool())
      db = g.sum(0, false, at::kFloat).to(static_cast<at::ScalarType>(ctx->saved_data["b_dtype"].toInt()));
    return {dx.to(static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt())),
            dw.to(static_cast<at::ScalarType>(ctx->saved_data["w_dtype"].toInt())), db};
  }
};

}  // namespace

at::Tensor fp8_linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (!fp8_linear_fits(x, weight))
    throw Error("speed.fp8: a matmul of shape (" + std::to_string(x.numel() / x.size(-1)) + ", " +
                    std::to_string(x.size(-1)) + ") x (" + std::to_string(weight.size(1)) + ", " +
                    std::to_string(weight.size(0)) + ") is not a multiple of 16 in every dimension",
                "set speed.fp8=false");
  auto shape = x.sizes().vec();
  shape.back() = weight.size(0);
  const at::Tensor x2 = x.reshape({-1, x.size(-1)}).contiguous();
  return Fp8LinearFunction::apply(x2, weight, bias).view(shape);
}

}  // namespace tokamak::kernels
