// UTF-8 repair as CPython's decoder does it with errors="replace", so that our ids equal tiktoken's on
// text that Python decoded with replacement (the only way such bytes reach tiktoken).
#include "engine/base/data/bpe_utf8.h"

#include <cstdint>
#include <cstring>

namespace tokamak::bpe {

namespace {

// Length of the well-formed sequence at p (1..4), or 0 with *bad set to how many bytes form the maximal
// ill-formed subpart that one U+FFFD replaces (at least 1).
size_t sequence_length(const uint8_t* p, size_t left, size_t* bad) {
  const uint8_t b = p[0];
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;  // the range allowed for the second byte (Unicode Table 3-7)
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    *bad = 1;  // a continuation byte, an overlong lead (C0, C1) or F5..FF
    return 0;
  }
  size_t i = 1;
  for (; i < need && i < left; ++i) {
    const uint8_t c = p[i];
    const bool ok = i == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) break;
  }
  if (i == need) return need;
  *bad = i;  // the lead and the continuation bytes that were still valid (or the data ended)
  return 0;
}

}  // namespace

std::string_view sanitize_utf8(std::string_view text, std::string& fixed, size_t* replaced) {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  size_t count = 0;
  bool copying = false;
  size_t copied_to = 0;  // text[0, copied_to) has been handled into `fixed`
  while (i < n) {
    // Eight ASCII bytes at a time: most text is ASCII.
    if (i + 8 <= n) {
      uint64_t v;
      std::memcpy(&v, p + i, 8);
      if ((v & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    size_t bad = 0;
    const size_t len = sequence_length(p + i, n - i, &bad);
    if (len) {
      i += len;
      continue;
    }
    if (!copying) {
      fixed.clear();
      fixed.reserve(n + 16);
      copying = true;
    }
    fixed.append(text.data() + copied_to, i - copied_to);
    fixed.append("\xEF\xBF\xBD");
    ++count;
    i += bad;
    copied_to = i;
  }
  if (replaced) *replaced += count;
  if (!copying) return text;
  fixed.append(text.data() + copied_to, n - copied_to);
  return fixed;
}

}  // namespace tokamak::bpe
