// Edit distance and the nearest name (see nearest.h).
#include "engine/base/util/nearest.h"

#include <algorithm>
#include <cctype>

namespace tokamak {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& given, const std::vector<std::string>& names) {
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string g = lower(given);
  std::string best;
  // A name that holds what was typed ("A100 80" → "A100 80GB SXM") before any by distance: the shortest of them.
  for (const std::string& n : names)
    if (!g.empty() && lower(n).find(g) != std::string::npos && (best.empty() || n.size() < best.size())) best = n;
  if (!best.empty()) return best;
  size_t best_d = SIZE_MAX;
  for (const std::string& n : names)
    if (const size_t d = edit_distance(g, lower(n)); d < best_d) best_d = d, best = n;
  return best;
}

}  // namespace tokamak
