// UTF-8 checks (see utf8.h), after Unicode's table 3-7 of well-formed byte sequences.
#include "engine/base/util/utf8.h"

#include <cstdio>

namespace tokamak {

size_t utf8_char_length(std::string_view s, size_t at) {
  if (at >= s.size()) return 0;
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(at);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;  // no surrogates
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c == 0xF4) n = 4, hi = 0x8F;  // nothing above U+10FFFF
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else return 0;
  if (at + n > s.size() || b(at + 1) < lo || b(at + 1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (b(at + i) < 0x80 || b(at + i) > 0xBF) return 0;
  return n;
}

size_t utf8_error_at(std::string_view s) {
  for (size_t at = 0; at < s.size();) {
    const size_t n = utf8_char_length(s, at);
    if (n == 0) return at;
    at += n;
  }
  return std::string_view::npos;
}

std::string name_problem(const std::string& what, std::string_view name) {
  const size_t bad = utf8_error_at(name);
  if (bad == std::string_view::npos) return {};
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(name[bad]));
  return what + " is not valid UTF-8 (byte " + std::to_string(bad + 1) + " is " + byte + ")";
}

std::string utf8_repaired(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    const size_t n = utf8_char_length(text, at);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++at;
      continue;
    }
    out.append(text.substr(at, n));
    at += n;
  }
  return out;
}

std::string printable(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < text.size(); ++shown) {
    if (shown == max_chars) return out + "…";
    const unsigned char c = static_cast<unsigned char>(text[i]);
    // A whole UTF-8 character passes as it is; a control byte or a stray byte does not.
    const size_t len = c < 0x20 || c == 0x7f ? 0 : c < 0x80 ? 1 : utf8_char_length(text, i);
    if (len > 0) {
      out.append(text.substr(i, len));
      i += len;
      continue;
    }
    char hex[5];
    std::snprintf(hex, sizeof hex, "\\x%02x", c);
    out += hex;
    ++i;
  }
  return out;
}

}  // namespace tokamak
