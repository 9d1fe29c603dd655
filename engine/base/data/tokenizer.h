// GPT-2's byte-level BPE tokenizer. Encoding equals OpenAI's (tiktoken's "gpt2") exactly: the same
// pre-tokenizing regex (PCRE2, Unicode properties) and the same lowest-rank-first merges.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tokamak {

struct EncodeStats {
  size_t invalid_utf8 = 0;  // byte sequences that were not UTF-8, each replaced by U+FFFD before encoding
};

class Tokenizer {
 public:
  static constexpr int32_t kEndOfText = 50256;  // "<|endoftext|>"

  // The tiktoken ranks file: one "base64(token bytes) rank" per line (gpt2.tiktoken).
  static Tokenizer from_tiktoken(const std::string& path);
  // The other form people have: GPT-2's encoder.json + vocab.bpe.
  static Tokenizer from_encoder_json(const std::string& encoder_json, const std::string& vocab_bpe);
  // GPT-2 from the set-up's asset cache, loaded once per process (thread-safe).
  static const Tokenizer& gpt2();

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Ordinary text: "<|endoftext|>" in the text is encoded as plain text, as tiktoken's encode_ordinary.
  std::vector<int32_t> encode(std::string_view text, EncodeStats* stats = nullptr) const;
  // Large inputs: split at places where the regex always splits, encoded on `threads` threads; the result
  // equals encode(). progress(done_bytes, total_bytes) is called from the calling thread; returning false
  // from it cancels (throws tokamak::Error).
  std::vector<int32_t> encode_parallel(std::string_view text, int threads,
                                       const std::function<bool(size_t, size_t)>& progress = {},
                                       EncodeStats* stats = nullptr) const;
  // Bytes of the tokens; invalid UTF-8 in the result is left as is (callers that print may sanitize).
  std::string decode(const std::vector<int32_t>& ids) const;
  std::string token_bytes(int32_t id) const;
  int32_t vocab_size() const;  // 50257 for GPT-2 (ranks + <|endoftext|>)
  // A hash of the vocabulary, for cache keys of tokenized datasets.
  uint64_t fingerprint() const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
