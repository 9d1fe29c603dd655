// Ladders: runnable scoreboards. A ladder file names a base config and a list of rungs, each a set of config
// keys; with "cumulative" (the default) every rung builds on the one before, as the write-ups' step-by-step
// speed-ups do, otherwise each rung applies to the base alone (sweeps).
//
//   {"name": "cpu-nano", "description": "...", "cumulative": true,
//    "base":  {"model.preset": "nano", "train.batch_size": 16},
//    "rungs": [{"name": "fp32 baseline", "set": {"speed.precision": "fp32"}}, ...]}
#pragma once
#include <string>
#include <vector>

#include "engine/base/config/config.h"

namespace tokamak {

struct LadderRung {
  std::string name;
  Config config;  // fully resolved: defaults ← base ← (previous rungs) ← this rung ← overrides
};

struct Ladder {
  std::string name;
  std::string description;
  std::vector<LadderRung> rungs;
};

// `overrides` ("key=value", as --set) apply to every rung after the ladder's own keys.
Ladder load_ladder(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace tokamak
