// Perplexity over non-overlapping windows (see perplexity.h).
#include "engine/torch/eval/perplexity.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "engine/torch/eval/token_logprobs.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {
namespace {

struct Window {
  size_t shard = 0;
  uint64_t start = 0;  // inputs are tokens[start, start + length), targets one further
  int64_t length = 0;
};

}  // namespace

PerplexityResult perplexity(GPTImpl& model, const std::vector<std::string>& shard_paths,
                            const PerplexityOptions& options) {
  const int64_t context = model.options().context;
  std::vector<MappedShard> shards;
  std::vector<Window> windows;
  int64_t total = 0;
  for (const std::string& path : shard_paths) {
    shards.emplace_back(path);
    const uint64_t n = shards.back().size();
    for (uint64_t start = 0; start + 1 < n; start += static_cast<uint64_t>(context)) {
      const int64_t length = static_cast<int64_t>(std::min<uint64_t>(context, n - 1 - start));
      windows.push_back({shards.size() - 1, start, length});
      total += length;
      if (options.max_windows > 0 && static_cast<int64_t>(windows.size()) == options.max_windows) break;
    }
    if (options.max_windows > 0 && static_cast<int64_t>(windows.size()) == options.max_windows) break;
  }
  if (windows.empty())
    throw Error("the data holds fewer than two tokens: there is nothing to predict", "give a longer text");
  if (options.max_windows > 0) {
    total = 0;
    for (const Window& w : windows) total += w.length;
  }

  const size_t per_batch = static_cast<size_t>(std::max<int64_t>(1, options.rows_per_batch));
  double loss_sum = 0;  // in float64 on the host: millions of terms
  int64_t done = 0;
  for (size_t first = 0; first < windows.size();) {
    // A batch holds consecutive windows of one length (all full, but for each shard's last).
    size_t n = 1;
    while (n < per_batch && first + n < windows.size() && windows[first + n].length == windows[first].length) ++n;
    const int64_t len = windows[first].length;
    at::Tensor tokens = at::empty({static_cast<int64_t>(n), len + 1}, at::kLong);
    auto acc = tokens.accessor<int64_t, 2>();
    for (size_t r = 0; r < n; ++r) {
      const Window& w = windows[first + r];
      const uint16_t* t = shards[w.shard].tokens() + w.start;
      for (int64_t j = 0; j <= len; ++j) acc[static_cast<int64_t>(r)][j] = t[j];
    }
    tokens = tokens.to(options.device);
    at::Tensor lp =
        token_logprobs(model, tokens.narrow(1, 0, len), tokens.narrow(1, 1, len), options.precision, options.device);
    loss_sum -= lp.to(at::kDouble).sum().item<double>();
    done += static_cast<int64_t>(n) * len;
    first += n;
    if (options.progress && !options.progress(done, total)) throw Error("evaluation was cancelled", "start it again");
  }
  PerplexityResult r;
  r.tokens = total;
  r.windows = static_cast<int64_t>(windows.size());
  r.loss = loss_sum / static_cast<double>(total);
  r.ppl = std::exp(r.loss);
  return r;
}

}  // namespace tokamak
