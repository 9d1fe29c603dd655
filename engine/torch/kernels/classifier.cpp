// The fused classifier's CPU kernel and its autograd function (see classifier.h). Per chunk of tokens: the
// chunk's logits (one matmul over the padded vocabulary, fp32 or bf16 under bf16 autocast), then the row kernel
// (softmax_rows.h: each row's loss, and its scaled softmax - onehot written over the logits, rows on all
// threads), then the input-gradient matmul while those rows are still in cache; the weight-gradient matmul
// once per block of rows (all of them for up to 1 GiB). Native streams the B·T·V logits through memory five
// more times (narrow, fp32 copy, log-softmax, its backward, the copy back); this reads them once.
#include "engine/torch/kernels/classifier.h"

#include <ATen/autocast_mode.h>
#include <ATen/Parallel.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>
#include <ATen/record_function.h>
#include <torch/autograd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/base/util/error.h"
#include "engine/torch/kernels/softmax_rows.h"

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

// How many of the N targets count (kIgnoreIndex does not); one outside [0, V) is refused.
int64_t count_valid_targets(const int64_t* tp, int64_t N, int64_t V) {
  int64_t n_valid = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (tp[i] == kIgnoreIndex) continue;
    if (tp[i] < 0 || tp[i] >= V)
      throw Error("fused classifier: target " + std::to_string(tp[i]) + " is outside the vocabulary [0, " +
                      std::to_string(V) + ")",
                  "check the data's token ids against model.vocab_size");
    ++n_valid;
  }
  return n_valid;
}

// Rows in parallel on LibTorch's threads; each row's loss lands in its own slot, so the caller's sum is the
// same whatever the split. Named for the profiler (`bench --kernels`): it is no ATen operator.
void softmax_xent_chunk(at::Tensor& lc, int64_t n, bool bf16, int64_t Vp, const int64_t* tp, int64_t V, bool with_grad,
                        double scale, double* losses) {
  RECORD_FUNCTION("tokamak::classifier_rows", std::vector<c10::IValue>());
  at::parallel_for(0, n, 8, [&](int64_t begin, int64_t end) {
    if (bf16) {
      std::vector<float> scratch(static_cast<size_t>(V));
      softmax_xent_rows_bf16(reinterpret_cast<uint16_t*>(lc.data_ptr<at::BFloat16>()), Vp, tp, begin, end, V,
                             kIgnoreIndex, with_grad, static_cast<float>(scale), scratch.data(), losses);
    } else {
      softmax_xent_rows_f32(lc.data_ptr<float>(), Vp, tp, begin, end, V, kIgnoreIndex, with_grad,
                            static_cast<float>(scale), losses);
    }
  });
}

// One block's rows g and inputs xb into the weight's gradient dw: written by the first block, added by the rest.
void add_weight_grad(at::Tensor& dw, const at::Tensor& g, const at::Tensor& xb, bool bf16, bool first) {
  if (bf16) {
    // bf16 operands, fp32 accumulation inside the matmul, one rounding to bf16 (as native's linear backward
    // under autocast), then into the fp32 gradient. Taken as (C, V) = xᵀ·g and transposed in that copy: oneDNN
    // runs it ~15% faster than gᵀ·x, whose left operand is the transposed (V, N) rows (fp32 is the other way
    // round). docs/journal/performance.md, "The fused classifier on a CPU".
    const at::Tensor part = at::mm(xb.t().contiguous(), g).t();
    if (first) dw.copy_(part);
    else dw.add_(part);
  } else if (first) {
    at::mm_out(dw, g.t(), xb);
  } else {
    dw.addmm_(g.t(), xb);
  }
}

}  // namespace

ClassifierResult classifier_forward_backward_cpu(const at::Tensor& x_in, const at::Tensor& weight_in,
                                                 const at::Tensor& targets, const ClassifierOptions& o,
                                                 bool with_grad) {
  RECORD_FUNCTION("tokamak::classifier", std::vector<c10::IValue>());  // names its matmuls and glue in profiles
  check_inputs(x_in, weight_in, targets, o.vocab_size);
  // Under bf16 autocast the matmuls run in bf16, as native's linear does there (on a CPU with AVX-512 BF16 that
  // is 2-3× the fp32 rate); the softmax and the loss are computed in fp32 either way.
  const bool bf16 =
      at::autocast::is_autocast_enabled(at::kCPU) && at::autocast::get_autocast_dtype(at::kCPU) == at::kBFloat16;
  const at::ScalarType dtype = bf16 ? at::kBFloat16 : at::kFloat;
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
  const at::Tensor x = x_in.to(dtype).contiguous();
  const at::Tensor t = targets.to(at::kLong).contiguous();
  const int64_t N = x.size(0), C = x.size(1), V = o.vocab_size;
  const int64_t chunk = std::max<int64_t>(1, std::min(o.chunk > 0 ? o.chunk : kDefaultClassifierChunk, N));
  // All Vp rows, padding included: the matmuls stay on the padded width (a multiple of 64), which in fp32 is
  // ~30% faster than on 50,257 columns; the row kernel reads only the first V columns of each row and zeroes
  // the padding's gradient, so padded rows are never predicted and their gradient is exactly zero.
  const at::Tensor w = weight_in.to(dtype).contiguous();
  const int64_t Vp = w.size(0);

  const int64_t* tp = t.data_ptr<int64_t>();
  const int64_t n_valid = count_valid_targets(tp, N, V);
  // As cross_entropy: the mean over the targets that count (0/0 = NaN when none do).
  const double scale = 1.0 / static_cast<double>(n_valid);

  // With gradients the rows' dlogits are kept for a block of up to kClassifierBlockBytes, so the weight's
  // gradient is one matmul over the whole block (K = the block's tokens): per-chunk weight-gradient matmuls
  // summed into an fp32 accumulator cost more (docs/journal/performance.md, "The fused classifier on a CPU"). The
  // chunk only sets how many rows go through the logits matmul, the row kernel and the input-gradient matmul
  // together, while they are still in cache.
  const int64_t elt = bf16 ? 2 : 4;
  const int64_t block_bytes = o.block_bytes > 0 ? o.block_bytes : kClassifierBlockBytes;
  const int64_t block = with_grad ? std::min(N, std::max(chunk, block_bytes / (Vp * elt) / chunk * chunk)) : chunk;
  at::Tensor rows = at::empty({block, Vp}, x.options());  // logits, then scale·(softmax - onehot) in place
  at::Tensor dx, dw;
  if (with_grad) {
    dx = at::empty({N, C}, x.options());
    dw = at::empty({Vp, C}, x.options().dtype(at::kFloat));
  }
  std::vector<double> losses(static_cast<size_t>(N));
  for (int64_t b = 0; b < N; b += block) {
    const int64_t nb = std::min(block, N - b);
    for (int64_t s = b; s < b + nb; s += chunk) {
      const int64_t n = std::min(chunk, b + nb - s);
      at::Tensor lc = rows.narrow(0, s - b, n);
      at::mm_out(lc, x.narrow(0, s, n), w.t());
      softmax_xent_chunk(lc, n, bf16, Vp, tp + s, V, with_grad, scale, losses.data() + s);
      if (!with_grad) continue;
      at::Tensor dxc = dx.narrow(0, s, n);
      at::mm_out(dxc, lc, w);
    }
    if (!with_grad) continue;
    add_weight_grad(dw, rows.narrow(0, 0, nb), x.narrow(0, b, nb), bf16, /*first=*/b == 0);
  }
  double loss_sum = 0.0;
  for (double l : losses) loss_sum += l;
  ClassifierResult r;
  r.loss = at::full({}, loss_sum * scale, x.options().dtype(at::kFloat));
  if (with_grad) {
    r.dx = dx.to(x_in.scalar_type());
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
                            const at::Tensor& targets, int64_t vocab_size, int64_t chunk, int64_t block_bytes) {
    ClassifierResult r = run(x, weight, targets, {vocab_size, chunk, block_bytes}, /*with_grad=*/true);
    ctx->saved_data["dx"] = r.dx;
    ctx->saved_data["dweight"] = r.dweight;
    return r.loss;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad) {
    const at::Tensor g = grad[0];  // () — 1/grad_accum from the trainer, 1 from a plain backward
    // Taken out of the context, so that autograd holds the only reference and may add the embedding's gradient
    // into the weight's in place (the graph is not kept for a second backward: the trainer never asks for one).
    at::Tensor dx = ctx->saved_data["dx"].toTensor(), dw = ctx->saved_data["dweight"].toTensor();
    ctx->saved_data.clear();
    // On a CPU reading g costs nothing, and a gradient of 1 (no accumulation) spares writing the (V, C) weight
    // gradient once more; on CUDA it would be a host sync, so there it is always a multiply. In place, by the
    // multi-tensor kernel that reads a device scalar where it lies: `dw * g` with a 0-dim CUDA g is a broadcast,
    // which ATen gives its generic strided kernel (two of the 39 such launches in the first sitting's profile, 0.36
    // ms a call on average).
    if (!g.is_cuda() && g.item<double>() == 1.0)
      return {dx, dw, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    RECORD_FUNCTION("tokamak::head_scale", std::vector<c10::IValue>());  // the head's, not the optimizer's
    at::_foreach_mul_(dx, g.to(dx.scalar_type()));
    at::_foreach_mul_(dw, g.to(dw.scalar_type()));
    return {dx, dw, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor fused_classifier(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                            const ClassifierOptions& o) {
  const bool with_grad = at::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad());
  if (!with_grad) return run(x, weight, targets, o, /*with_grad=*/false).loss;  // evaluation: no gradients
  return FusedClassifierFunction::apply(x, weight, targets, o.vocab_size, o.chunk, o.block_bytes);
}

}  // namespace tokamak::kernels
