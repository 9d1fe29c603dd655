// Fuzz target: the config parser. The input is a JSON config, optionally followed by a line "--set" and one
// key=value per line (as the CLI's --set). Bad input must end in tokamak::Error (a one-line message), never a
// crash or another exception type; a config that parses must survive a JSON round trip unchanged and can be
// checked by config_problems().
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find("\n--set\n");
  const std::string json = input.substr(0, split);
  std::vector<std::string> sets;
  if (split != std::string::npos) {
    size_t start = split + 7;
    while (start <= input.size()) {
      size_t end = input.find('\n', start);
      if (end == std::string::npos) end = input.size();
      if (end > start) sets.push_back(input.substr(start, end - start));
      start = end + 1;
    }
  }
  Config c;
  try {
    c = config_from_json(json.empty() ? "{}" : json);
    apply_overrides(c, sets);
  } catch (const Error& e) {
    fuzz::require(std::string(e.what()).find('\n') == std::string::npos, "config error spans several lines");
    return 0;
  }
  const std::string once = config_to_json(c);
  fuzz::require(config_to_json(config_from_json(once)) == once, "config JSON round trip changed the config");
  (void)config_problems(c, 0);
  return 0;
}
