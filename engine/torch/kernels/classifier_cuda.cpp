// The ATen side of the fused classifier's CUDA kernel (classifier.cu): per chunk of tokens, cuBLAS writes the
// chunk's logits over the padded vocabulary in the compute dtype (bf16 under autocast), the kernel turns them
// into dlogits in place and writes each row's loss, then cuBLAS computes dx for the chunk and the chunk's share of
// dweight (fp32: written by the first chunk's matmul, added by the others'; GPT-2 at batch 64 is one chunk). Nothing reads back to the host: the count of targets that are not ignored stays a
// device scalar. Without TOKAMAK_WITH_CUDA the launcher in classifier.cpp throws instead.
#ifdef TOKAMAK_WITH_CUDA
#include <ATen/record_function.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>

#include "engine/base/util/error.h"
#include "engine/torch/kernels/classifier.h"
#include "engine/torch/kernels/cuda_launch.h"

namespace tokamak::kernels {

ClassifierResult classifier_forward_backward_cuda(const at::Tensor& x_in, const at::Tensor& weight_in,
                                                  const at::Tensor& targets, const ClassifierOptions& o,
                                                  bool with_grad) {
  RECORD_FUNCTION("tokamak::classifier", std::vector<c10::IValue>());  // names its kernels and glue in profiles
  if (x_in.dim() != 2 || weight_in.dim() != 2 || x_in.size(1) != weight_in.size(1) || targets.size(0) != x_in.size(0) ||
      o.vocab_size < 1 || o.vocab_size > weight_in.size(0))
    throw Error("fused classifier: x must be (N, C), weight (Vp, C), targets (N,) and vocab_size in [1, Vp]",
                "this is a bug in the caller: reshape to (B·T, C) first");
  // Under autocast the logits are computed in its dtype, as native's linear is; otherwise in x's.
  const at::ScalarType dtype =
      at::autocast::is_autocast_enabled(at::kCUDA) ? at::autocast::get_autocast_dtype(at::kCUDA) : x_in.scalar_type();
  if (dtype != at::kFloat && dtype != at::kBFloat16)
    throw Error("fused classifier: no CUDA kernel for this dtype", "use speed.precision fp32, tf32, bf16 or bf16-pure");
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const c10::cuda::CUDAGuard device_guard(x_in.device());
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const at::Tensor x = x_in.to(dtype).contiguous(), w = weight_in.to(dtype).contiguous();
  const at::Tensor t = targets.to(at::kLong).contiguous();
  const int64_t N = x.size(0), C = x.size(1), V = o.vocab_size, Vp = w.size(0);
  // Default chunk: at most kClassifierCudaChunkBytes of logits, so GPT-2 at batch 64 × 1024 is one pass.
  const int64_t per_row = Vp * static_cast<int64_t>(x.element_size());
  const int64_t chunk = std::max<int64_t>(1, std::min(o.chunk > 0 ? o.chunk : kClassifierCudaChunkBytes / per_row, N));
  const at::Tensor n_valid = t.ne(-100).sum().to(at::kFloat);  // () on the device
  at::Tensor losses = at::empty({N}, x.options().dtype(at::kFloat));
  at::Tensor logits = at::empty({chunk, Vp}, x.options());
  at::Tensor dx, dw;
  if (with_grad) {
    dx = at::empty({N, C}, x.options());
    dw = at::empty({Vp, C}, x.options().dtype(at::kFloat));  // the first chunk's matmul writes all of it
  }
  const cuda::DType kind = dtype == at::kBFloat16 ? cuda::DType::kBFloat16 : cuda::DType::kFloat;
  for (int64_t s = 0; s < N; s += chunk) {
    const int64_t n = std::min(chunk, N - s);
    const at::Tensor xc = x.narrow(0, s, n);
    at::Tensor lc = logits.narrow(0, 0, n);
    at::mm_out(lc, xc, w.t());  // (n, Vp)
    cuda::softmax_ce_grad(kind, lc.data_ptr(), n, V, Vp, t.data_ptr<int64_t>() + s, losses.data_ptr<float>() + s,
                          n_valid.data_ptr<float>(), with_grad, stream);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    if (!with_grad) continue;
    at::Tensor dxc = dx.narrow(0, s, n);
    at::mm_out(dxc, lc, w);  // (n, C); dlogits already hold the 1/N
    // bf16 inputs, fp32 accumulation and output. Later chunks add theirs (mm then add: addmm's fp32-out form asks
    // for a bf16 input to add in some LibTorch versions).
    if (s == 0 && dtype == at::kFloat) at::mm_out(dw, lc.t(), xc);
    else if (s == 0) at::mm_out(dw, lc.t(), xc, at::kFloat);
    else if (dtype == at::kFloat) dw.addmm_(lc.t(), xc);
    else dw.add_(at::mm(lc.t(), xc, at::kFloat));
  }
  ClassifierResult r;
  r.loss = losses.sum() / n_valid;
  if (with_grad) {
    r.dx = dx.to(x_in.scalar_type());
    r.dweight = dw.to(weight_in.scalar_type());
  }
  return r;
}

}  // namespace tokamak::kernels
#endif
