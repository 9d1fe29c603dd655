// Fuzz target: ladder files (resources/ladders/*.json), read from a path as `tokamak bench --ladder` does.
// Anything but a tokamak::Error is a bug.
#include <cstdint>

#include "engine/base/config/ladder.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = fuzz::write_input(data, size, ".ladder.json");
  try {
    Ladder ladder = load_ladder(path);
    for (const auto& rung : ladder.rungs) (void)config_problems(rung.config, 0);
  } catch (const Error&) {}
  return 0;
}
