// The two tiny models the suites train, spelled once. Both are small enough that a step takes milliseconds
// on one CPU thread; their sizes are not tuned for anything but speed.
#pragma once
#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace tokamak::test {
// For tests that build a model directly: 2 layers, 2 heads, width 32, context 16, no vocabulary padding
// (so logits and the reference's have the same width).
ModelConfig tiny_model(int64_t vocab_size = 64);

// For tests that run a whole training (engine, CLI or studio) over a real corpus: 1 layer, 2 heads, width 32,
// context 32, the GPT-2 vocabulary. As config overrides, and as `--set` arguments for the CLI; `more` come
// after the shape, so a suite can change one dimension (a later assignment of a key wins).
std::vector<std::string> tiny_run_overrides(const std::vector<std::string>& more = {});
QStringList tiny_run_args(const std::vector<std::string>& more = {});
}  // namespace tokamak::test
