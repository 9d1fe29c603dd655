// The options every config-taking command shares: --config FILE, --preset NAME, --set key=value.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "engine/base/config/config.h"

namespace CLI {
class App;
}

namespace tokamak::cli {

struct ConfigArgs {
  std::string file;
  std::string preset;
  std::vector<std::string> sets;
  void add_to(CLI::App& command);
  // Defaults ← checkpoint's config when checkpoint.resume is given ← --config file ← --preset ← --set.
  // checkpoint_config(path) returns a checkpoint's config JSON (it needs LibTorch, so the caller passes it);
  // without it checkpoint.resume is kept as given and the checkpoint is not read.
  Config resolve(const std::function<std::string(const std::string&)>& checkpoint_config = {}) const;
};

}  // namespace tokamak::cli
