// Sampling (see sampler.h). Each new token runs the model over the last `context` tokens; for the small
// models and short samples of a training run that costs less than keeping a KV cache in step.
#include "engine/generate/sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include "engine/model/gpt.h"
#include "engine/util/error.h"

namespace tokamak {

std::vector<int32_t> generate(GPTImpl& model, const std::vector<int32_t>& prompt, const SampleOptions& o,
                              const c10::Device& device) {
  if (o.temperature <= 0) throw Error("temperature must be positive", "use e.g. --temperature 0.8");
  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  std::vector<int64_t> ids(prompt.begin(), prompt.end());
  if (ids.empty()) ids.push_back(50256);  // an empty prompt starts a new document
  std::vector<int32_t> out;
  const int64_t context = model.options().context;
  for (int64_t i = 0; i < o.max_new_tokens; ++i) {
    const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - context);
    auto idx = at::tensor(std::vector<int64_t>(ids.begin() + start, ids.end()), at::kLong).view({1, -1}).to(device);
    auto logits = model.forward(idx).logits.select(1, -1).squeeze(0).to(at::kCPU, at::kFloat) / o.temperature;
    if (o.top_k > 0 && o.top_k < logits.size(0)) {
      auto kth = std::get<0>(logits.topk(o.top_k)).select(0, -1);
      logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
    }
    auto probs = at::softmax(logits, 0);
    int64_t next = at::multinomial(probs, 1, false, gen).item<int64_t>();
    if (o.stop_at_end_of_text && next == 50256) break;
    ids.push_back(next);
    out.push_back(static_cast<int32_t>(next));
  }
  if (was_training) model.train();
  return out;
}

}  // namespace tokamak
