// The name a user probably meant: for "did you mean …?" in the one-line errors of unknown config keys, devices
// and the like. LibTorch-free.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tokamak {

// Levenshtein's distance: insertions, deletions and substitutions, one each.
size_t edit_distance(const std::string& a, const std::string& b);
// The name of NAMES nearest to GIVEN, case ignored: the shortest that holds it, else the nearest by edit_distance
// ("" for no names).
std::string nearest_name(const std::string& given, const std::vector<std::string>& names);

}  // namespace tokamak
