// UTF-8 validation with Python's errors="replace" semantics: each maximal ill-formed subpart (Unicode's
// "substitution of maximal subparts", which CPython follows) becomes one U+FFFD. Valid text is not copied.
// Internal to the tokenizer.
#pragma once
#include <string>
#include <string_view>

namespace tokamak::bpe {

// Returns `text` itself when it is valid UTF-8; otherwise fills `fixed` with the repaired text and returns a
// view of it. *replaced (when given) is increased by the number of U+FFFD substituted.
std::string_view sanitize_utf8(std::string_view text, std::string& fixed, size_t* replaced);

}  // namespace tokamak::bpe
