// Fuzz target: sweep files (resources/sweeps/*.json), planned as `tokamak sweep FILE` does. Anything but a
// one-line tokamak::Error is a bug; a plan that is accepted stays inside the cap, its trial names are unique,
// every trial's config passes config_problems, and its ASHA rungs rise strictly below the trial's steps.
#include <cstdint>
#include <set>
#include <string>

#include "engine/fleet/queue/sweep.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  SweepPlan plan;
  try {
    plan = plan_sweep(text, "fuzz.json", 0);
  } catch (const Error& e) {
    fuzz::require(std::string(e.what()).find('\n') == std::string::npos, "sweep error spans several lines");
    return 0;
  }
  fuzz::require(!plan.trials.empty() && plan.trials.size() <= 10000, "a plan outside 1..10000 trials");
  std::set<std::string> names;
  for (const SweepTrial& t : plan.trials) {
    fuzz::require(names.insert(t.name).second, "two trials share a name");
    fuzz::require(config_problems(t.config, 0).empty(), "a planned trial's config has problems");
    int64_t last = 0;
    for (int64_t r : asha_rungs(plan.asha, t.config.train.steps)) {
      fuzz::require(r > last && r < t.config.train.steps, "ASHA rungs do not rise below train.steps");
      last = r;
    }
  }
  return 0;
}
