// Per-token log-probabilities of a batch (see token_logprobs.h).
#include "engine/torch/eval/token_logprobs.h"

#include <ATen/ATen.h>

#include "engine/torch/model/autocast.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {

at::Tensor token_logprobs(GPTImpl& model, const at::Tensor& inputs, const at::Tensor& targets, Precision precision,
                          const c10::Device& device) {
  const bool was_training = model.is_training();
  model.eval();
  at::NoGradGuard no_grad;
  at::Tensor logits;
  {
    // As train/step.cpp: autocast for the mixed precisions, bf16 (or fp16) matmuls.
    const bool autocast = precision == Precision::kBf16 || precision == Precision::kFp16;
    AutocastGuard guard(device.type(), autocast, precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
    logits = model.forward(inputs).logits;
  }
  if (was_training) model.train();
  logits = logits.to(at::kFloat);  // (B, T, V): the log-sum-exp of 50k logits wants fp32
  at::Tensor picked = logits.gather(2, targets.unsqueeze(2)).squeeze(2);
  return picked - at::logsumexp(logits, 2);
}

}  // namespace tokamak
