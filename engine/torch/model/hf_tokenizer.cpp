// GPT-2 tokenizer files from the ranks (see hf_tokenizer.h). A token of rank r was made by one merge; which
// one is found by running BPE over its bytes with only the ranks below r, which must end in exactly two parts
// (what tiktoken's own merge recovery does). vocab.json spells bytes as GPT-2's printable code points.
#include "engine/torch/model/hf_tokenizer.h"

#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace {

// GPT-2's bytes_to_unicode(): printable bytes stand for themselves, the others for 256 + n.
std::vector<std::string> byte_spellings() {
  std::vector<int> code(256, -1);
  for (int b = '!'; b <= '~'; ++b) code[b] = b;
  for (int b = 0xA1; b <= 0xAC; ++b) code[b] = b;
  for (int b = 0xAE; b <= 0xFF; ++b) code[b] = b;
  int n = 0;
  for (int b = 0; b < 256; ++b)
    if (code[b] < 0) code[b] = 256 + n++;
  std::vector<std::string> out(256);
  for (int b = 0; b < 256; ++b) {
    const int c = code[b];  // < 0x800: one or two UTF-8 bytes
    out[b] = c < 0x80 ? std::string(1, static_cast<char>(c))
                      : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
  }
  return out;
}

}  // namespace

SpelledBpe spelled_bpe(const Tokenizer& tok) {
  const auto spell = byte_spellings();
  auto spelled = [&](const std::string& bytes) {
    std::string s;
    for (unsigned char b : bytes) s += spell[b];
    return s;
  };
  const int32_t end_of_text = tok.vocab_size() - 1;  // <|endoftext|> follows the ranks
  std::unordered_map<std::string, int32_t> rank;
  std::vector<std::string> bytes(static_cast<size_t>(end_of_text));
  SpelledBpe out;
  out.tokens.reserve(static_cast<size_t>(end_of_text) + 1);
  for (int32_t id = 0; id < end_of_text; ++id) {
    bytes[id] = tok.token_bytes(id);
    rank[bytes[id]] = id;
    out.tokens.push_back(spelled(bytes[id]));
  }
  out.tokens.push_back("<|endoftext|>");
  for (int32_t r = 0; r < end_of_text; ++r) {
    if (bytes[r].size() < 2) continue;
    std::vector<std::string> parts;
    for (char c : bytes[r]) parts.emplace_back(1, c);
    while (parts.size() > 2) {
      size_t best = parts.size();
      int32_t best_rank = r;
      for (size_t i = 0; i + 1 < parts.size(); ++i) {
        auto it = rank.find(parts[i] + parts[i + 1]);
        if (it != rank.end() && it->second < best_rank) best = i, best_rank = it->second;
      }
      if (best == parts.size()) break;
      parts[best] += parts[best + 1];
      parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    if (parts.size() != 2)
      throw Error("token " + std::to_string(r) + " of the tokenizer is not one merge of earlier tokens",
                  "the ranks file is not a byte-level BPE vocabulary");
    out.merges.push_back(spelled(parts[0]) + " " + spelled(parts[1]));
  }
  return out;
}

void export_hf_tokenizer(const Tokenizer& tok, const std::string& dir, int64_t context) {
  const SpelledBpe bpe = spelled_bpe(tok);
  nlohmann::json vocab;  // key order does not matter to readers; ordered_json would cost 50K² look-ups
  for (size_t id = 0; id < bpe.tokens.size(); ++id) vocab[bpe.tokens[id]] = static_cast<int32_t>(id);
  std::string merges = "#version: 0.2\n";
  for (const std::string& m : bpe.merges) merges += m + "\n";
  make_dirs(dir);
  write_file_atomically(dir + "/vocab.json", vocab.dump());
  write_file_atomically(dir + "/merges.txt", merges);
  const nlohmann::json config = {{"tokenizer_class", "GPT2Tokenizer"}, {"model_max_length", context},
                                 {"bos_token", "<|endoftext|>"},       {"eos_token", "<|endoftext|>"},
                                 {"unk_token", "<|endoftext|>"},       {"add_prefix_space", false}};
  write_file_atomically(dir + "/tokenizer_config.json", config.dump(2) + "\n");
}

}  // namespace tokamak
