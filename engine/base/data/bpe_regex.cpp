// The pre-tokenizing regex on PCRE2. The pattern is tiktoken's gpt2 pattern with one change of spelling:
// tiktoken's regex engine (Rust) reads \s as Unicode White_Space, while PCRE2's \s with UCP is \p{Z}, \h
// and \v, which also holds U+180E (Mongolian vowel separator, no longer a space since Unicode 6.3). The
// class is therefore written out as White_Space, so both engines cut the same text the same way.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "engine/base/data/bpe_regex.h"

#include <pcre2.h>

#include <cstring>
#include <string>

#include "engine/base/util/error.h"

namespace tokamak::bpe {

namespace {

#define TOKAMAK_WS \
  "\\t\\n\\x{0B}\\f\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
// '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
const char kPattern[] = "'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+| ?[^" TOKAMAK_WS
                        "\\p{L}\\p{N}]+"
                        "|[" TOKAMAK_WS "]+(?![^" TOKAMAK_WS "])|[" TOKAMAK_WS "]+";
#undef TOKAMAK_WS

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(code, buf, sizeof buf);
  return reinterpret_cast<const char*>(buf);
}

// Printable ASCII other than space: never \s, always a whole character.
inline bool solid_ascii(unsigned char c) { return c > 0x20 && c < 0x7F; }

}  // namespace

Pretokenizer::Pretokenizer() {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &error,
                        &offset, nullptr);
  if (!code_)
    throw Error("tokenizer: PCRE2 cannot compile the GPT-2 pattern at offset " + std::to_string(offset) + ": " +
                    pcre2_message(error),
                "PCRE2 must be built with Unicode support (Debian: libpcre2-dev)");
  // Without JIT (a PCRE2 built without it) matching is slower but the same.
  jit_ = pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
}

Pretokenizer::~Pretokenizer() { pcre2_code_free(code_); }

Pretokenizer::Cursor::Cursor(const Pretokenizer& re) : re_(re) {
  match_ = pcre2_match_data_create_from_pattern(re.code_, nullptr);
  context_ = pcre2_match_context_create(nullptr);
  if (re.jit_) {
    // The default 32 KiB machine stack is enough for this pattern; a larger one is cheap insurance.
    stack_ = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
    pcre2_jit_stack_assign(context_, nullptr, stack_);
  }
}

Pretokenizer::Cursor::~Cursor() {
  if (stack_) pcre2_jit_stack_free(stack_);
  pcre2_match_context_free(context_);
  pcre2_match_data_free(match_);
}

size_t Pretokenizer::Cursor::piece_end(std::string_view text, size_t pos) {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  // The text was validated by sanitize_utf8, so PCRE2's own UTF check is skipped (it would rescan the whole
  // subject on every call).
  const int rc = re_.jit_ ? pcre2_jit_match(re_.code_, subject, text.size(), pos, 0, match_, context_)
                          : pcre2_match(re_.code_, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match_, context_);
  if (rc > 0) {
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_);
    // Every character is a letter, a number, a space or none of these, so a piece always starts at pos.
    if (ovector[0] == pos && ovector[1] > pos) return ovector[1];
  }
  throw Error("tokenizer: the GPT-2 pattern did not match at byte " + std::to_string(pos) +
                  (rc < 0 ? " (PCRE2: " + pcre2_message(rc) + ")" : std::string()),
              "this is a bug in Tokamak: please report it with the input text");
}

// Why these cuts are safe. Let W = text[a, b) be a maximal run of ASCII whitespace with printable non-space
// ASCII on both sides (X = text[a-1], Y = text[b]); X and Y are then not \s either, so W is also a maximal
// run of Unicode White_Space.
// 1. Only the whitespace alternatives can take a whitespace character other than a leading ' ', so the
//    piece holding X ends at a, and nothing started before a reads past text[a].
// 2. If W has k >= 2 characters, the piece at a is \s+(?!\S) backed off by one: text[a, b-1). In the text
//    cut at b-1 the same alternative takes text[a, b-1) up to the end. From b-1 on, matching is the same
//    alone or not: the pattern has no look-behind, no anchors and no \b. So the cut is at b-1 (the last
//    whitespace character then stays with Y, as " word" does).
// 3. If k == 1 and W is not ' ' (a lone '\n', '\t', '\r'), W is a piece on its own and the cut is at b.
//    A lone ' ' belongs to Y's piece: no cut there.
size_t next_safe_split(std::string_view text, size_t from) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  auto space = [](unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  // Prose has a newline every line, so runs are found with memchr on '\n'; runs without one are not needed.
  size_t i = from;
  while (i < n) {
    const void* hit = std::memchr(s + i, '\n', n - i);
    if (!hit) break;
    size_t a = static_cast<const unsigned char*>(hit) - s, b = a + 1;
    while (a > 0 && space(s[a - 1])) --a;
    while (b < n && space(s[b])) ++b;
    i = b;
    if (a == 0 || b >= n || !solid_ascii(s[a - 1]) || !solid_ascii(s[b])) continue;
    const size_t cut = b - a >= 2 ? b - 1 : b;
    if (cut >= from) return cut;
  }
  return std::string_view::npos;
}

}  // namespace tokamak::bpe
