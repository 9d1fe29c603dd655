// GPT-2's tokenizer files for a Hugging Face folder (vocab.json, merges.txt, tokenizer_config.json), made
// from the tokenizer Tokamak already has (gpt2.tiktoken holds ranks only; the merges are recovered from them).
#pragma once
#include <cstdint>
#include <string>

namespace tokamak {

class Tokenizer;

// Writes the files into `dir`; `context` is the model's longest sequence (model_max_length).
void export_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t context);

}  // namespace tokamak
