// parse_token_ids (see token_ids.h).
#include "engine/base/data/token_ids.h"

#include <charconv>
#include <cstring>

#include "engine/base/util/error.h"

namespace tokamak {

static bool is_separator(char c) { return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r'; }

std::vector<int32_t> parse_token_ids(const std::string& text) {
  std::vector<int32_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (is_separator(*p)) {
      ++p;
      continue;
    }
    int32_t id = 0;
    const auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc() || (next < end && !is_separator(*next))) {
      const char* word_end = p;
      while (word_end < end && !is_separator(*word_end)) ++word_end;
      throw Error("--decode expects token ids separated by spaces; '" + std::string(p, word_end) + "' is not one",
                  "for example: tokamak tokenize --decode \"31373 995\"");
    }
    ids.push_back(id);
    p = next;
  }
  return ids;
}

}  // namespace tokamak
