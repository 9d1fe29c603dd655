// The fused classifier: the final LayerNorm's output and the (tied) token embedding → mean cross-entropy, with
// the gradients of both computed during the forward pass, a chunk of tokens at a time, so the full (N, V)
// logits are never stored (llm.c's fused_classifier). Backward only scales the saved gradients. The reference
// it must match is classifier_reference (engine/torch/kernels/reference.h): linear, narrow to the real vocabulary,
// cross_entropy.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "engine/base/plan/memory_estimate.h"  // kClassifierBlockBytes, kClassifierCudaChunkBytes

namespace tokamak::kernels {

using tokamak::kClassifierBlockBytes;
using tokamak::kClassifierCudaChunkBytes;

constexpr int64_t kIgnoreIndex = -100;  // targets equal to it add no loss and no gradient (cross_entropy's default)

struct ClassifierOptions {
  int64_t vocab_size = 0;  // real tokens: rows of weight at or past it (vocabulary padding) are never predicted
  int64_t chunk = 0;       // tokens per chunk; 0 = kDefaultClassifierChunk
  int64_t block_bytes = 0;  // CPU: most bytes of row gradients kept for one weight-gradient matmul; 0 = default
};
constexpr int64_t kDefaultClassifierChunk = 512;  // see docs/journal/performance.md, "The fused classifier on a CPU"
// kClassifierBlockBytes (CPU) and kClassifierCudaChunkBytes (CUDA): the most each kernel holds at once, in
// engine/base/plan/memory_estimate.h beside the estimate that counts them.

struct ClassifierResult {
  at::Tensor loss;     // () fp32: mean over targets that are not kIgnoreIndex
  at::Tensor dx;       // (N, C) d loss / d x, in x's dtype; undefined without gradients
  at::Tensor dweight;  // (Vp, C) d loss / d weight, in weight's dtype, zero in padded rows; undefined likewise
};

// x: (N, C); weight: (Vp, C) with Vp >= vocab_size; targets: (N,) int64. The loss and, when with_grad, both
// gradients (for an upstream gradient of 1). On the CPU the matmuls run in bf16 under bf16 autocast and in
// fp32 otherwise; softmax and loss in fp32.
ClassifierResult classifier_forward_backward_cpu(const at::Tensor& x, const at::Tensor& weight,
                                                 const at::Tensor& targets, const ClassifierOptions& o, bool with_grad);

// The same on a CUDA device (engine/torch/kernels/classifier.cu): bf16 logits per chunk, dlogits written in place.
// Only in builds with TOKAMAK_WITH_CUDA; elsewhere it throws.
ClassifierResult classifier_forward_backward_cuda(const at::Tensor& x, const at::Tensor& weight,
                                                  const at::Tensor& targets, const ClassifierOptions& o,
                                                  bool with_grad);

// The differentiable loss: x (N, C) and weight get gradients through autograd, as from the reference. Picks
// the CPU or CUDA kernel by x's device.
at::Tensor fused_classifier(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& targets,
                            const ClassifierOptions& o);

}  // namespace tokamak::kernels
