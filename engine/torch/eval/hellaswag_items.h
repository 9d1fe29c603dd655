// HellaSwag items from the authors' JSON-lines (`ctx`, `endings` (4 strings), `label` (0..3); other fields
// such as `ind` or `activity_label` are ignored), tokenized as llm.c's dev/data/hellaswag.py does: the context's
// tokens, then for each ending the tokens of " " + ending (GPT-2's tokenizer attaches the space to the word).
// No LibTorch: the scoring is engine/torch/eval/scoring.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// One multiple-choice question as token ids: a shared context and its candidate endings.
struct ChoiceItem {
  std::vector<int32_t> context;
  std::vector<std::vector<int32_t>> endings;
  int64_t label = 0;  // index of the right ending
  int64_t line = 0;   // where it came from (1-based), for messages
};

// Reads and checks every line (blank lines allowed); at most `limit` items when limit > 0. Each malformed line
// is a one-line Error naming the file, the line and what is wrong. A file without items is an error too.
std::vector<ChoiceItem> read_hellaswag(const std::string& path, int64_t limit = 0);

}  // namespace tokamak
