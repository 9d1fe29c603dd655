// The score of one candidate ending, shared by the scoring (LibTorch) and the accuracy (plain C++).
#pragma once
#include <cstdint>

namespace tokamak {

struct EndingScore {
  double sum_logprob = 0;   // log p(ending | context): sum over the ending's tokens
  double mean_logprob = 0;  // the same divided by the tokens scored (length-normalised)
  int64_t tokens = 0;       // ending tokens scored
};

}  // namespace tokamak
