// Sampled tokens → text without a split character at its end (see sampled_text.h).
#include "engine/base/data/sampled_text.h"

#include "engine/base/data/bpe_utf8.h"
#include "engine/base/data/tokenizer.h"

namespace tokamak {
namespace {

bool continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// How many bytes the character that `lead` begins has; 0 for a byte that begins none (ASCII is complete).
size_t announced_length(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// The range Unicode allows for the byte after `lead` (no overlong forms, no surrogates, nothing past U+10FFFF).
bool valid_second(unsigned char lead, unsigned char second) {
  if (lead == 0xE0) return second >= 0xA0 && second <= 0xBF;
  if (lead == 0xED) return second >= 0x80 && second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90 && second <= 0xBF;
  if (lead == 0xF4) return second >= 0x80 && second <= 0x8F;
  return continuation(second);
}

}  // namespace

size_t utf8_open_tail(std::string_view text) {
  // The last byte that is not a continuation byte, within the three a character can still lack.
  size_t back = 1;
  while (back <= 3 && back <= text.size() && continuation(static_cast<unsigned char>(text[text.size() - back]))) ++back;
  if (back > 3 || back > text.size()) return 0;
  const std::string_view tail = text.substr(text.size() - back);
  const auto lead = static_cast<unsigned char>(tail[0]);
  if (announced_length(lead) <= tail.size()) return 0;  // complete, ASCII, or a lead byte that is never valid
  if (tail.size() >= 2 && !valid_second(lead, static_cast<unsigned char>(tail[1]))) return 0;
  return tail.size();
}

std::string sampled_text(const Tokenizer& tokenizer, const std::string& prompt, const std::vector<int32_t>& tokens) {
  std::string raw = prompt + tokenizer.decode(tokens), fixed;
  raw.resize(raw.size() - utf8_open_tail(raw));
  return std::string(bpe::sanitize_utf8(raw, fixed, nullptr));
}

}  // namespace tokamak
