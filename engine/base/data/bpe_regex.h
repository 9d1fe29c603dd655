// GPT-2's pre-tokenizer: the regex that cuts text into the pieces BPE merges within, compiled once with
// PCRE2 (UTF + Unicode properties, JIT), and the rule for where text can be cut for parallel encoding.
// Internal to the tokenizer.
#pragma once
#include <cstddef>
#include <string_view>

struct pcre2_real_code_8;
struct pcre2_real_match_data_8;
struct pcre2_real_match_context_8;
struct pcre2_real_jit_stack_8;

namespace tokamak::bpe {

class Pretokenizer {
 public:
  Pretokenizer();  // throws tokamak::Error if PCRE2 cannot compile the pattern
  ~Pretokenizer();
  Pretokenizer(const Pretokenizer&) = delete;
  Pretokenizer& operator=(const Pretokenizer&) = delete;

  // One per thread: PCRE2's compiled code is shared read-only, match data and JIT stack are not.
  class Cursor {
   public:
    explicit Cursor(const Pretokenizer& re);
    ~Cursor();
    Cursor(const Cursor&) = delete;
    Cursor& operator=(const Cursor&) = delete;
    // The end of the piece that starts at `pos` in the valid UTF-8 `text` (pos < text.size()).
    size_t piece_end(std::string_view text, size_t pos);

   private:
    const Pretokenizer& re_;
    pcre2_real_match_data_8* match_ = nullptr;
    pcre2_real_match_context_8* context_ = nullptr;
    pcre2_real_jit_stack_8* stack_ = nullptr;
  };

 private:
  pcre2_real_code_8* code_ = nullptr;
  bool jit_ = false;
};

// A position p >= from where the regex always cuts and never looks across (see bpe_regex.cpp),
// so that pieces(text) == pieces(text[0, p)) + pieces(text[p, n)); npos when there is none.
size_t next_safe_split(std::string_view text, size_t from);

}  // namespace tokamak::bpe
