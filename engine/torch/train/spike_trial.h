// A window of garbage tokens at a known data position: how the tests, and a person trying the alarms end to end
// (TOKAMAK_TRY_SPIKE_AT, docs/RELIABILITY.md), make a real loss spike happen where they expect it.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>

namespace tokamak {

// Tokens no text holds, in no order: the vocabulary's last 1,000 (rare byte-pair merges), a fixed arithmetic
// sequence so that the run's random state is left alone. A model that has learned anything finds them far less
// likely than uniform.
void fill_with_garbage(at::Tensor& inputs, at::Tensor& targets, int64_t vocab);

// The TrainControl::batch_hook that puts garbage at data positions [FROM, TO) (0-based).
std::function<void(int64_t, int64_t, at::Tensor&, at::Tensor&)> garbage_hook(int64_t from, int64_t to, int64_t vocab);

// TOKAMAK_TRY_SPIKE_AT's text, "STEP" or "STEP:LENGTH" (1-based step; length 1 by default), as [from, to);
// anything else throws tokamak::Error naming the variable.
void parse_spike_trial(const std::string& text, int64_t* from, int64_t* to);

}  // namespace tokamak
