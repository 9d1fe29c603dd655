// Garbage tokens at a known data position (see spike_trial.h).
#include "engine/torch/train/spike_trial.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {

void fill_with_garbage(at::Tensor& inputs, at::Tensor& targets, int64_t vocab) {
  const int64_t n = inputs.numel();
  const auto opts = at::TensorOptions().dtype(at::kLong).device(inputs.device());
  // The last thousand ids of the vocabulary (rare in any text), or all of it when it is smaller: always ids
  // from 0 to vocab - 1.
  const int64_t span = std::min<int64_t>(1000, vocab), first = vocab - span;
  inputs = (first + (at::arange(n, opts) * 7919 + 17).remainder(span)).view(inputs.sizes());
  targets = (first + (at::arange(n, opts) * 104729 + 5).remainder(span)).view(targets.sizes());
}

std::function<void(int64_t, int64_t, at::Tensor&, at::Tensor&)> garbage_hook(int64_t from, int64_t to, int64_t vocab) {
  return [from, to, vocab](int64_t, int64_t data_step, at::Tensor& inputs, at::Tensor& targets) {
    if (data_step >= from && data_step < to) fill_with_garbage(inputs, targets, vocab);
  };
}

void parse_spike_trial(const std::string& text, int64_t* from, int64_t* to) {
  const auto bad = [&] {
    return Error("TOKAMAK_TRY_SPIKE_AT='" + text + "' is not STEP or STEP:LENGTH",
                 "set it to the step that should read garbage tokens, e.g. 120 or 120:3, or unset it");
  };
  char* end = nullptr;
  const long long step = std::strtoll(text.c_str(), &end, 10);
  long long length = 1;
  if (end == text.c_str() || step < 1 || step > (1LL << 40)) throw bad();
  if (*end == ':') {
    const char* at = end + 1;
    length = std::strtoll(at, &end, 10);
    if (end == at || length < 1 || length > 1000000) throw bad();
  }
  if (*end != '\0') throw bad();
  *from = step - 1, *to = step - 1 + length;
}

}  // namespace tokamak
