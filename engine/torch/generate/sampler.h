// Text generation from a GPT: temperature, top-k and top-p (nucleus) sampling with its own seeded generator, so sampling
// during training never disturbs the training run's random numbers.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace tokamak {

class GPTImpl;

struct SampleOptions {
  int64_t max_new_tokens = 64;
  double temperature = 0.8;  // > 0
  int64_t top_k = 40;        // 0 = all tokens
  // (0, 1]: sample from the fewest most likely tokens whose probabilities (after temperature and top-k) reach
  // top_p, the one that crosses it included; 1 = no cut.
  double top_p = 1.0;
  uint64_t seed = 1337;
  bool stop_at_end_of_text = true;  // stop when the model writes <|endoftext|>
  bool kv_cache = true;             // one forward per new token (false: the whole window each time)
  // Asked with the new tokens once max_new_tokens are out: true samples one more (and asks again). Lets a
  // caller finish what the last token left open (sample_text: a UTF-8 character split between tokens).
  std::function<bool(const std::vector<int32_t>& out)> more;
  // Called with the new tokens after each one is made (streaming).
  std::function<void(const std::vector<int32_t>& out)> on_token;
};

// Returns only the new tokens. The model is put in eval mode for the call and restored afterwards.
std::vector<int32_t> generate(GPTImpl& model, const std::vector<int32_t>& prompt, const SampleOptions& options,
                              const c10::Device& device);

}  // namespace tokamak
