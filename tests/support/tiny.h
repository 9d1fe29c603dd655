// The two tiny models the suites train, spelled once. Both are small enough that a step takes milliseconds
// on one CPU thread; their sizes are not tuned for anything but speed.
#pragma once
#include <QStringList>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/config/config.h"

namespace tokamak::test {
// For tests that build a model directly: 2 layers, 2 heads, width 32, context 16, no vocabulary padding
// (so logits and the reference's have the same width).
ModelConfig tiny_model(int64_t vocab_size = 64);

// For tests that run a whole training (engine, CLI or studio) over a real corpus: 1 layer, 2 heads, width 32,
// context 32, the GPT-2 vocabulary. As config overrides, and as `--set` arguments for the CLI; `more` come
// after the shape, so a suite can change one dimension (a later assignment of a key wins).
std::vector<std::string> tiny_run_overrides(const std::vector<std::string>& more = {});
QStringList tiny_run_args(const std::vector<std::string>& more = {});
// The short, quiet tiny run the CLI, queue and host suites start: on DATA (none: the default corpus), batch 2,
// a step reported every step, no samples and no evals, one thread, STEPS steps; `more` after.
std::vector<std::string> quiet_run_overrides(const std::string& data, int steps,
                                             const std::vector<std::string>& more = {});
// The in-process training suites' run: the tiny run with two blocks (per-block switches, activation
// checkpointing among them, need a block boundary to act on) on DATA, batch 4, every step reported, no evals and
// no samples, 2 warm-up steps, one thread; `more` after.
std::vector<std::string> two_block_run_overrides(const std::string& data, const std::vector<std::string>& more = {});

// A checkpoint of a freshly initialised (seeded) tiny-run model at DIR/step_N (no optimizer state): for
// suites that need a real file to sample from, export or list. Returns its path.
std::string save_tiny_checkpoint(const std::string& dir, int64_t step, const std::string& run_uid, uint64_t seed = 1);
// The tiny_model(vocab_size) (seeded) written as a Hugging Face GPT-2 folder at DIR.
void export_tiny_hf(const std::string& dir, int64_t vocab_size = 64, uint64_t seed = 1);
}  // namespace tokamak::test
