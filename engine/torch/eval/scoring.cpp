// Batched multiple-choice scoring (see scoring.h).
#include "engine/torch/eval/scoring.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "engine/base/util/error.h"
#include "engine/torch/eval/token_logprobs.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {
namespace {

// One (item, ending) pair laid out for the model: tokens = context + ending, cut to the window.
struct Row {
  size_t item = 0, ending = 0;
  std::vector<int64_t> tokens;  // inputs are tokens[0, n-1), targets tokens[1, n)
  int64_t first_scored = 0;     // index into targets of the ending's first scored token
};

void check_fits(const ChoiceItem& item, size_t k, int64_t context) {
  const std::vector<int32_t>& ending = item.endings[k];
  if (static_cast<int64_t>(ending.size()) > context)
    throw Error("item on line " + std::to_string(item.line) + ": ending " + std::to_string(k) + " has " +
                    std::to_string(ending.size()) + " tokens, more than the model's context of " +
                    std::to_string(context),
                "evaluate a model with a longer context, or leave that item out");
}

Row make_row(const ChoiceItem& item, size_t i, size_t k, int64_t context) {
  check_fits(item, k, context);
  const std::vector<int32_t>& ending = item.endings[k];
  Row r;
  r.item = i, r.ending = k;
  r.tokens.assign(item.context.begin(), item.context.end());
  r.tokens.insert(r.tokens.end(), ending.begin(), ending.end());
  const size_t keep = static_cast<size_t>(context) + 1;  // context inputs and their targets
  if (r.tokens.size() > keep) r.tokens.erase(r.tokens.begin(), r.tokens.end() - static_cast<std::ptrdiff_t>(keep));
  // Targets are tokens[1..]: the ending's tokens are the last ending.size() of them, but the row's very first
  // token is never a target (nothing predicts it), as in llm.c's shifted mask.
  const int64_t n_targets = static_cast<int64_t>(r.tokens.size()) - 1;
  r.first_scored = std::max<int64_t>(0, n_targets - static_cast<int64_t>(ending.size()));
  return r;
}

}  // namespace

void check_choices_fit(const std::vector<ChoiceItem>& items, int64_t context) {
  for (const ChoiceItem& item : items)
    for (size_t k = 0; k < item.endings.size(); ++k) check_fits(item, k, context);
}

std::vector<std::vector<EndingScore>> score_choices(GPTImpl& model, const std::vector<ChoiceItem>& items,
                                                    const ScoreOptions& options) {
  const int64_t context = model.options().context;
  std::vector<Row> rows;
  std::vector<std::vector<EndingScore>> scores(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    scores[i].resize(items[i].endings.size());
    for (size_t k = 0; k < items[i].endings.size(); ++k) rows.push_back(make_row(items[i], i, k, context));
  }
  const size_t per_batch = static_cast<size_t>(std::max<int64_t>(1, options.rows_per_batch));
  for (size_t start = 0; start < rows.size(); start += per_batch) {
    const size_t n = std::min(per_batch, rows.size() - start);
    int64_t width = 0;
    for (size_t r = 0; r < n; ++r)
      width = std::max<int64_t>(width, static_cast<int64_t>(rows[start + r].tokens.size()) - 1);
    // Padding with token 0 after a row's end: causal attention never lets it reach the positions scored.
    at::Tensor inputs = at::zeros({static_cast<int64_t>(n), width}, at::kLong);
    at::Tensor targets = at::zeros({static_cast<int64_t>(n), width}, at::kLong);
    at::Tensor mask = at::zeros({static_cast<int64_t>(n), width}, at::kFloat);
    auto in = inputs.accessor<int64_t, 2>(), tg = targets.accessor<int64_t, 2>();
    auto mk = mask.accessor<float, 2>();
    for (size_t r = 0; r < n; ++r) {
      const Row& row = rows[start + r];
      const int64_t len = static_cast<int64_t>(row.tokens.size()) - 1;
      for (int64_t t = 0; t < len; ++t) {
        in[r][t] = row.tokens[t], tg[r][t] = row.tokens[t + 1];
        mk[r][t] = t >= row.first_scored ? 1.f : 0.f;
      }
    }
    at::Tensor lp =
        token_logprobs(model, inputs.to(options.device), targets.to(options.device), options.precision, options.device);
    mask = mask.to(options.device);
    // Summed in float64 on the host: a few dozen terms per row, exact enough to compare rows.
    at::Tensor sums = (lp * mask).to(at::kDouble).sum(1).cpu(), counts = mask.sum(1).cpu();
    for (size_t r = 0; r < n; ++r) {
      const Row& row = rows[start + r];
      EndingScore& s = scores[row.item][row.ending];
      s.sum_logprob = sums[static_cast<int64_t>(r)].item<double>();
      s.tokens = static_cast<int64_t>(counts[static_cast<int64_t>(r)].item<float>());
      s.mean_logprob = s.tokens > 0 ? s.sum_logprob / static_cast<double>(s.tokens) : 0.0;
    }
    if (options.progress) {
      const int64_t done = static_cast<int64_t>(rows[start + n - 1].item) + (start + n == rows.size() ? 1 : 0);
      if (!options.progress(done, static_cast<int64_t>(items.size())))
        throw Error("evaluation was cancelled", "start it again");
    }
  }
  return scores;
}

}  // namespace tokamak
