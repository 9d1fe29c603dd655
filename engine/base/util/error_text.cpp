// one_line and error_text (see error_text.h).
#include "engine/base/util/error_text.h"

namespace tokamak {

std::string one_line(const std::string& text) {
  std::string s = text.substr(0, text.find("Exception raised from "));
  std::string out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    const size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(first, last - first + 1);
    start = end + 1;
  }
  return out;
}

std::string error_text(const std::exception& e) { return one_line(e.what()); }

}  // namespace tokamak
