// The fused classifier's CPU kernel and its autograd function (see classifier.h). Per chunk of tokens: the
// chunk's logits (one matmul, fp32 or bf16 under bf16 autocast), then the row kernel (softmax_rows.h: each
// row's loss, and softmax - onehot written over the logits, two passes per row, rows on all threads), then the
// two gradient matmuls. The B·T·V logits are never stored, and never streamed through memory the five times
// of native's forward, narrow, log-softmax, its backward and the padding.
#include "engine/kernels/classifier.h"

#include <ATen/autocast_mode.h>
#include <ATen/Parallel.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>
#include <torch/autograd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/kernels/softmax_rows.h"
#include "engine/util/error.h"

namespace tokamak::kernels {
namespace {

void check_inputs(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets, int64_t vocab_size) {
  if (x.dim() != 2 || weight.dim() != 2 || targets.dim() != 1 || x.size(0) != targets.size(0) ||
      x.size(1) != weight.size(1))
    throw Error("fused classifier: x must be (N, C), weight (V, C) and targets (N,); got x " + std::to_string(x.dim()) +
                    "-d, weight " + std::to_string(weight.dim()) + "-d",
                "this is a bug in the caller: reshape to (B·T, C) first");
  if (vocab_size < 1 || vocab_size > weight.size(0))
    throw Error("fused classifier: vocab_size " + std::to_string(vocab_size) + " is not in [1, " +
                    std::to_string(weight.size(0)) + "]",
                "pass model.vocab_size, at most the embedding's rows");
}

}  // namespace

ClassifierResult classifier_forward_backward_cpu(const at::Tensor& x_in, const at::Tensor& weight_in,
                                                 const at::Tensor& targets, const ClassifierOptions& o,
                                                 bool with_grad) {
  check_inputs(x_in, weight_in, targets, o.vocab_size);
  // Under bf16 autocast the matmuls run in bf16, as native's linear does there (on a CPU with AVX-512 BF16 that
  // is 3-4× the fp32 rate); the softmax and the loss are computed in fp32 either way.
  const bool bf16 = at::autocast::is_autocast_enabled(at::kCPU) &&
                    at::autocast::get_autocast_dtype(at::kCPU) == at::kBFloat16;
  const at::ScalarType dtype = bf16 ? at::kBFloat16 : at::kFloat;
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::Tensor x = x_in.to(dtype).contiguous();
  const at::Tensor t = targets.to(at::kLong).contiguous();
  const int64_t N = x.size(0), C = x.size(1), V = o.vocab_size;
  const int64_t chunk = std::max<int64_t>(1, std::min(o.chunk > 0 ? o.chunk : kDefaultClassifierChunk, N));
  // (V, C): padded rows are never predicted nor touched.
  const at::Tensor w = weight_in.narrow(0, 0, V).to(dtype).contiguous();

  const int64_t* tp = t.data_ptr<int64_t>();
  int64_t n_valid = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (tp[i] == kIgnoreIndex) continue;
    if (tp[i] < 0 || tp[i] >= V)
      throw Error("fused classifier: target " + std::to_string(tp[i]) + " is outside the vocabulary [0, " +
                      std::to_string(V) + ")",
                  "check the data's token ids against model.vocab_size");
    ++n_valid;
  }
  // As cross_entropy: the mean over the targets that count (0/0 = NaN when none do).
  const double scale = 1.0 / static_cast<double>(n_valid);

  ClassifierResult r;
  at::Tensor dx, dw, dw_chunk;
  if (with_grad) {
    dx = at::empty({N, C}, x.options());                                // in the compute dtype, scaled once at the end
    dw = at::zeros({weight_in.size(0), C}, x.options().dtype(at::kFloat));  // fp32: chunks add into it
    if (bf16) dw_chunk = at::empty({V, C}, x.options());
  }
  at::Tensor logits = at::empty({chunk, V}, x.options());  // (chunk, V): logits, then dlogits in place
  std::vector<double> losses(static_cast<size_t>(N));
  for (int64_t s = 0; s < N; s += chunk) {
    const int64_t n = std::min(chunk, N - s);
    const at::Tensor xc = x.narrow(0, s, n);
    at::Tensor lc = logits.narrow(0, 0, n);
    at::mm_out(lc, xc, w.t());
    // Rows in parallel on LibTorch's threads; each row's loss lands in its own slot, so the sum below is the
    // same whatever the split.
    at::parallel_for(0, n, 8, [&](int64_t begin, int64_t end) {
      if (bf16) {
        std::vector<float> scratch(static_cast<size_t>(V));
        softmax_xent_rows_bf16(reinterpret_cast<uint16_t*>(lc.data_ptr<at::BFloat16>()), tp + s, begin, end, V,
                               kIgnoreIndex, with_grad, scratch.data(), losses.data() + s);
      } else {
        softmax_xent_rows_f32(lc.data_ptr<float>(), tp + s, begin, end, V, kIgnoreIndex, with_grad,
                              losses.data() + s);
      }
    });
    if (!with_grad) continue;
    at::Tensor dxc = dx.narrow(0, s, n);
    at::mm_out(dxc, lc, w);
    if (bf16) {
      at::mm_out(dw_chunk, lc.t(), xc);  // bf16 operands, fp32 accumulation inside; one rounding per chunk
      dw.narrow(0, 0, V).add_(dw_chunk, scale);
    } else {
      dw.narrow(0, 0, V).addmm_(lc.t(), xc, /*beta=*/1.0, /*alpha=*/scale);  // the 1/N in the matmul's alpha
    }
  }
  double loss_sum = 0.0;
  for (double l : losses) loss_sum += l;
  r.loss = at::full({}, loss_sum * scale, x.options().dtype(at::kFloat));
  if (with_grad) {
    r.dx = dx.to(at::kFloat).mul_(scale).to(x_in.scalar_type());
    r.dweight = dw.to(weight_in.scalar_type());
  }
  return r;
}

#ifndef TOKAMAK_WITH_CUDA
ClassifierResult classifier_forward_backward_cuda(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                  const ClassifierOptions&, bool) {
  throw Error("the fused classifier's CUDA kernel is not in this build", "build with a CUDA LibTorch and nvcc");
}
#endif

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

ClassifierResult run(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                     const ClassifierOptions& o, bool with_grad) {
  return x.is_cuda() ? classifier_forward_backward_cuda(x, weight, targets, o, with_grad)
                     : classifier_forward_backward_cpu(x, weight, targets, o, with_grad);
}

// The gradients are computed in forward (that is the point); backward scales them by the loss's gradient.
class FusedClassifierFunction : public torch::autograd::Function<FusedClassifierFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& targets, int64_t vocab_size, int64_t chunk) {
    ClassifierResult r = run(x, weight, targets, {vocab_size, chunk}, /*with_grad=*/true);
    ctx->saved_data["dx"] = r.dx;
    ctx->saved_data["dweight"] = r.dweight;
    return r.loss;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const at::Tensor g = grad[0];  // () — 1/grad_accum from the trainer, 1 from a plain backward
    return {ctx->saved_data["dx"].toTensor() * g.to(ctx->saved_data["dx"].toTensor().scalar_type()),
            ctx->saved_data["dweight"].toTensor() * g.to(ctx->saved_data["dweight"].toTensor().scalar_type()),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor fused_classifier(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                            const ClassifierOptions& o) {
  const bool with_grad = at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad());
  if (!with_grad) return run(x, weight, targets, o, /*with_grad=*/false).loss;  // evaluation: no gradients
  return FusedClassifierFunction::apply(x, weight, targets, o.vocab_size, o.chunk);
}

}  // namespace tokamak::kernels
