// GPT-2's tokenizer files for a Hugging Face folder (vocab.json, merges.txt, tokenizer_config.json), made
// from the tokenizer Tokamak already has (gpt2.tiktoken holds ranks only; the merges are recovered from them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

class Tokenizer;

// A byte-level BPE vocabulary as GPT-2's files spell it (each byte as a printable code point, so " the" is
// "Ġthe"): tokens[id] for every id, <|endoftext|> last, and merges[r] = "A B", the merge that made the r-th
// token of two bytes or more, in rank order. Hugging Face's vocab.json/merges.txt and GGUF's
// tokenizer.ggml.tokens/merges both hold exactly these.
struct SpelledBpe {
  std::vector<std::string> tokens;
  std::vector<std::string> merges;
};
SpelledBpe spelled_bpe(const Tokenizer& tokenizer);

// Writes the files into `dir`; `context` is the model's longest sequence (model_max_length).
void export_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t context);

}  // namespace tokamak
