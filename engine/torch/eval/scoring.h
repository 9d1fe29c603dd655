// Multiple-choice scoring: for every item and every ending, the log-likelihood of the ending's tokens given
// the context, summed and averaged over the ending's tokens (llm.c's sum and mean losses, negated). Rows (one
// per item and ending) are batched: padded at the end to the batch's longest row and masked, which changes
// nothing before the padding since attention is causal.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/base/config/choices.h"  // Precision
#include "engine/torch/eval/hellaswag_items.h"
#include "engine/torch/eval/scoring_types.h"

namespace tokamak {

class GPTImpl;

struct ScoreOptions {
  c10::Device device = c10::kCPU;
  Precision precision = Precision::kFp32;
  int64_t rows_per_batch = 16;  // rows of (context + ending) per forward; logits take rows × T × vocab floats
  // After each batch: (items done, items in all). Return false to stop (an Error "cancelled" is thrown).
  std::function<bool(int64_t done, int64_t total)> progress;
};

// A row longer than the model's context (context + ending) keeps its last context + 1 tokens: the start of
// the context is dropped, as a reader with a short memory would. An ending longer than the model's context
// cannot be scored and is an Error naming the item's line. result[i][k] is item i's ending k.
std::vector<std::vector<EndingScore>> score_choices(GPTImpl& model, const std::vector<ChoiceItem>& items,
                                                    const ScoreOptions& options);

// The Error score_choices would throw for a model with this context, without a model: a run checks its
// eval.tasks before step 1 instead of failing at its first evaluation.
void check_choices_fit(const std::vector<ChoiceItem>& items, int64_t context);

}  // namespace tokamak
