// Perplexity of a model over token shards: exp of the mean per-token loss over non-overlapping windows of
// the model's context. Window w of a shard predicts tokens w·T+1 .. w·T+T from the T tokens before each, so
// every token but a shard's first is predicted exactly once; a shard's last window may be shorter. The mean is
// over tokens (a short last window weighs by its length). Each shard is its own stream (shards of one dataset
// start with an end-of-text token, so nothing is lost at the seams).
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/config/choices.h"  // Precision

namespace tokamak {

class GPTImpl;

struct PerplexityResult {
  double loss = 0;      // mean cross-entropy per token, in nats
  double ppl = 0;       // exp(loss)
  int64_t tokens = 0;   // tokens predicted (scored)
  int64_t windows = 0;  // forward windows
};

struct PerplexityOptions {
  c10::Device device = c10::kCPU;
  Precision precision = Precision::kFp32;
  int64_t rows_per_batch = 8;  // windows per forward
  int64_t max_windows = 0;     // > 0: only the first windows (a quick estimate)
  // After each batch: (tokens done, tokens in all). Return false to stop (an Error "cancelled" is thrown).
  std::function<bool(int64_t done, int64_t total)> progress;
};

// Throws an Error when the shards hold fewer than two tokens in all (nothing to predict).
PerplexityResult perplexity(GPTImpl& model, const std::vector<std::string>& shards, const PerplexityOptions& options);

}  // namespace tokamak
