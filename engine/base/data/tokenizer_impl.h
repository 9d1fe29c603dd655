// The state behind tokamak::Tokenizer, shared by its two source files (loading, and encoding/decoding).
// Internal to engine/base/data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/data/bpe_ranks.h"
#include "engine/base/data/bpe_regex.h"
#include "engine/base/data/tokenizer.h"

namespace tokamak {

struct Tokenizer::Impl {
  // tokens[rank] = bytes; eot is the id of "<|endoftext|>" (after the ranks for GPT-2: 50256).
  Impl(const std::vector<std::string>& tokens, int32_t eot);

  bpe::RankTable ranks;
  bpe::Pretokenizer pretokenizer;
  int32_t eot = 0;
  int32_t vocab_size = 0;
  uint64_t fingerprint = 0;
};

}  // namespace tokamak
