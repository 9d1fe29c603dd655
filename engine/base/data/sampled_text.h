// The text of sampled tokens as a reader sees it. GPT-2's tokens are byte-level, so one multi-byte UTF-8
// character can be split between tokens, and a sample cut after a number of tokens can end inside one: shown
// as it is, that tail reads as U+FFFD. Such a tail is held back until a later token completes it.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tokamak {

class Tokenizer;

// The bytes at the end of `text` that begin a UTF-8 character not complete yet (0 to 3): a lead byte followed
// by fewer continuation bytes than it announces, all valid so far. Ill-formed bytes are never an open tail:
// no later byte would mend them.
size_t utf8_open_tail(std::string_view text);

// prompt + the tokens' text without a last character the tokens leave open, and with any ill-formed bytes
// before it replaced as Python's errors="replace" does: always valid UTF-8, whatever the model wrote.
std::string sampled_text(const Tokenizer& tokenizer, const std::string& prompt, const std::vector<int32_t>& tokens);

}  // namespace tokamak
