// The one model call every evaluation makes: log p(target | the tokens before it) at every position of a
// batch, in fp32, without gradients. HellaSwag's scoring and perplexity both reduce this tensor.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "engine/base/config/choices.h"  // Precision

namespace tokamak {

class GPTImpl;

// inputs, targets: (B, T) int64 on the model's device, T <= model.context. Returns (B, T) float32 on the same
// device. Computed as logit[target] - logsumexp(logits), so no second (B, T, V) tensor is made. The model runs
// under the precision's autocast (as training evaluates) and in eval mode; its mode is restored after.
at::Tensor token_logprobs(GPTImpl& model, const at::Tensor& inputs, const at::Tensor& targets, Precision precision,
                          const c10::Device& device);

}  // namespace tokamak
