// ConfigArgs (see config_args.h).
#include "app/cli/config_args.h"

#include <CLI/CLI.hpp>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {

void ConfigArgs::add_to(CLI::App& command) {
  command.add_option("--config", file, "JSON config file (see `tokamak config --defaults`)");
  command.add_option("--preset", preset, "model preset: nano, mini, gpt2, gpt2-medium, gpt2-large, gpt2-xl");
  command.add_option("--set", sets, "override a config key, e.g. --set train.steps=200 (repeatable)");
}

Config ConfigArgs::resolve(const std::function<std::string(const std::string&)>& checkpoint_config) const {
  Config c;
  std::string file_text = file.empty() ? "" : read_file(file);
  // A resumed run continues with the config it was started with, then takes the overrides given now.
  Config probe = file.empty() ? c : config_from_json(file_text, c);
  apply_overrides(probe, sets);
  if (!probe.checkpoint.resume.empty() && checkpoint_config)
    c = config_from_json(checkpoint_config(probe.checkpoint.resume));
  if (!file.empty()) c = config_from_json(file_text, c);
  if (!preset.empty()) apply_model_preset(c.model, preset);
  apply_overrides(c, sets);
  if (!probe.checkpoint.resume.empty()) c.checkpoint.resume = probe.checkpoint.resume;
  return c;
}

}  // namespace tokamak::cli
