// The options every config-taking command shares: --config FILE, --preset NAME, --set key=value.
#pragma once
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace CLI { class App; }

namespace tokamak::cli {

struct ConfigArgs {
  std::string file;
  std::string preset;
  std::vector<std::string> sets;
  void add_to(CLI::App& command);
  // Defaults ← checkpoint's config when train.resume is given ← --config file ← --preset ← --set.
  Config resolve() const;
};

}  // namespace tokamak::cli
