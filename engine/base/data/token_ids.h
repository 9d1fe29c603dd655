// The text form of token ids that `tokamak tokenize --decode` reads: integers separated by spaces, commas,
// tabs or newlines. In the core (not the CLI) so that a fuzz target can reach it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// Throws an Error quoting the first word that is not an int32 (range is the tokenizer's to check).
std::vector<int32_t> parse_token_ids(const std::string& text);

}  // namespace tokamak
