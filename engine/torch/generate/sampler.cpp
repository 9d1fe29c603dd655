// Sampling (see sampler.h). With the KV cache the prompt runs once and each new token is one forward of that
// token alone; once the text outgrows model.context the window slides, and since positions are absolute the
// cache is rebuilt over the last `context` tokens for every further token (as without the cache).
#include "engine/torch/generate/sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ATen.h>

#include "engine/base/util/error.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {

std::vector<int32_t> generate(GPTImpl& model, const std::vector<int32_t>& prompt, const SampleOptions& o,
                              const c10::Device& device) {
  if (o.temperature <= 0) throw Error("temperature must be positive", "use e.g. --temperature 0.8");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw Error("top-p must be in (0, 1]", "use e.g. --top-p 0.9, or 1 for no cut");
  const bool was_training = model.is_training();
  model.eval();
  torch::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  std::vector<int64_t> ids(prompt.begin(), prompt.end());
  if (ids.empty()) ids.push_back(50256);  // an empty prompt starts a new document
  std::vector<int32_t> out;
  const int64_t context = model.options().context;
  std::vector<KVCache> cache;
  int64_t cached = 0;  // tokens of `ids` the cache holds
  // One more token: false when the model ended the text (stop_at_end_of_text).
  auto sample_one = [&]() -> bool {
    const auto n = static_cast<int64_t>(ids.size());
    const int64_t start = std::max<int64_t>(0, n - context);
    at::Tensor last;
    if (o.kv_cache) {
      if (start > 0 || cached == 0) cache.clear(), cached = start;  // (re)fill from the window's start
      auto idx = at::tensor(std::vector<int64_t>(ids.begin() + cached, ids.end()), at::kLong).view({1, -1}).to(device);
      last = model.forward_cached(idx, cache).select(1, -1);
      cached = n;
    } else {
      auto idx = at::tensor(std::vector<int64_t>(ids.begin() + start, ids.end()), at::kLong).view({1, -1}).to(device);
      last = model.forward(idx).logits.select(1, -1);
    }
    auto logits = last.squeeze(0).to(at::kCPU, at::kFloat) / o.temperature;
    if (o.top_k > 0 && o.top_k < logits.size(0)) {
      auto kth = std::get<0>(logits.topk(o.top_k)).select(0, -1);
      logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
    }
    auto probs = at::softmax(logits, 0);
    if (o.top_p < 1) {
      // The nucleus: the most likely tokens until their sum reaches top_p (the token that crosses it is kept).
      auto [sorted, order] = probs.sort(0, /*descending=*/true);
      auto before = sorted.cumsum(0) - sorted;  // probability of the tokens ahead of each
      auto drop = before >= o.top_p;
      probs = probs.index_put({order.masked_select(drop)}, at::zeros({}, probs.options()));
      probs = probs / probs.sum();
    }
    int64_t next = at::multinomial(probs, 1, false, gen).item<int64_t>();
    if (o.stop_at_end_of_text && next == 50256) return false;
    ids.push_back(next);
    out.push_back(static_cast<int32_t>(next));
    if (o.on_token) o.on_token(out);
    return true;
  };
  bool going = true;
  for (int64_t i = 0; going && i < o.max_new_tokens; ++i) going = sample_one();
  while (going && o.more && o.more(out)) going = sample_one();
  if (was_training) model.train();
  return out;
}

}  // namespace tokamak
