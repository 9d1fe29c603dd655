// UTF-8 checks for names a user types (runs, sweeps): folder names and JSON outputs need whole characters, and a
// JSON library refuses a string that is not UTF-8 at the moment it writes it, long after the run has started.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace tokamak {

// The byte offset of the first ill-formed sequence (overlong forms, surrogates and code points above U+10FFFF
// included), or std::string_view::npos when `text` is valid UTF-8.
size_t utf8_error_at(std::string_view text);

// The length in bytes of the well-formed character that starts at text[at], or 0 when none starts there.
size_t utf8_char_length(std::string_view text, size_t at);

// TEXT with every byte that starts no well-formed character replaced by U+FFFD: for a receiver that refuses
// what is not UTF-8 (D-Bus, a JSON writer).
std::string utf8_repaired(std::string_view text);

// TEXT with control bytes and bytes that are not UTF-8 shown as \xNN, fit to print inside a one-line message (another
// process's name, a line of a damaged file, a name a server sent); past MAX_CHARS characters it ends in "…".
std::string printable(std::string_view text, size_t max_chars = std::string_view::npos);

// "" when `name` may name a run or a sweep; else one line saying what is wrong with it (which byte), for an
// Error's message. `what` names the field ("name", "--name", "the sweep's \"name\"").
std::string name_problem(const std::string& what, std::string_view name);

}  // namespace tokamak
