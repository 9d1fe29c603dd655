// Multiple-choice accuracy and its interval (see accuracy.h).
#include "engine/torch/eval/accuracy.h"

#include <algorithm>
#include <cmath>

#include "engine/base/util/error.h"

namespace tokamak {

Interval wilson_interval(int64_t k, int64_t n) {
  if (n <= 0) return {0.0, 1.0};
  const double z = 1.959963984540054, z2 = z * z;
  const double nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z / (1 + z2 / nn) * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

size_t predict(const std::vector<EndingScore>& endings, bool normalised) {
  size_t best = 0;
  for (size_t k = 1; k < endings.size(); ++k) {
    const double a = normalised ? endings[k].mean_logprob : endings[k].sum_logprob;
    const double b = normalised ? endings[best].mean_logprob : endings[best].sum_logprob;
    if (a > b) best = k;  // strictly better: a tie keeps the earlier ending, as argmin does
  }
  return best;
}

ChoiceAccuracy choice_accuracy(const std::vector<std::vector<EndingScore>>& scores,
                               const std::vector<int64_t>& labels) {
  if (scores.size() != labels.size())
    throw Error("choice_accuracy: " + std::to_string(scores.size()) + " scored items but " +
                std::to_string(labels.size()) + " labels");
  ChoiceAccuracy a;
  a.n = static_cast<int64_t>(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    a.correct += static_cast<int64_t>(predict(scores[i], false)) == labels[i];
    a.correct_norm += static_cast<int64_t>(predict(scores[i], true)) == labels[i];
  }
  if (a.n > 0) {
    a.acc = static_cast<double>(a.correct) / static_cast<double>(a.n);
    a.acc_norm = static_cast<double>(a.correct_norm) / static_cast<double>(a.n);
  }
  a.acc_ci = wilson_interval(a.correct, a.n);
  a.acc_norm_ci = wilson_interval(a.correct_norm, a.n);
  return a;
}

}  // namespace tokamak
