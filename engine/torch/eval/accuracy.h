// Multiple-choice accuracy from ending scores, as llm.c's dev/data/hellaswag.py computes it: the prediction
// is the ending with the lowest loss — `acc` by the SUM of the ending's token losses (highest total log-
// likelihood), `acc_norm` by their MEAN (length-normalised); a tie goes to the first ending (argmin). With a
// 95% Wilson score interval for each, which stays inside [0, 1] and is sound for small n and accuracies near
// 0 or 1, where the normal approximation is not. No LibTorch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/torch/eval/scoring_types.h"

namespace tokamak {

struct Interval {
  double low = 0, high = 0;
};

// 95% Wilson score interval for k successes in n trials (z = 1.959964). n = 0 gives [0, 1].
Interval wilson_interval(int64_t k, int64_t n);

struct ChoiceAccuracy {
  int64_t n = 0;
  int64_t correct = 0, correct_norm = 0;
  double acc = 0, acc_norm = 0;
  Interval acc_ci, acc_norm_ci;
};

// Index of the predicted ending: highest sum (normalised = false) or mean (true) log-likelihood.
size_t predict(const std::vector<EndingScore>& endings, bool normalised);

// scores[i] are item i's endings, labels[i] its right ending.
ChoiceAccuracy choice_accuracy(const std::vector<std::vector<EndingScore>>& scores, const std::vector<int64_t>& labels);

}  // namespace tokamak
