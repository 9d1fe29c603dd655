// `tokamak config`: the defaults as a JSON file to start from, or every key with its comment.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/config_args.h"

namespace tokamak::cli {

void add_config_command(CLI::App& app) {
  auto args = std::make_shared<ConfigArgs>();
  auto defaults = std::make_shared<bool>(false);
  auto keys = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("config", "print the configuration (JSON) or its keys");
  cmd->add_flag("--defaults", *defaults, "print the default configuration");
  cmd->add_flag("--keys", *keys, "list every key with its type, value and meaning");
  args->add_to(*cmd);
  cmd->callback([args, defaults, keys] {
    Config c = *defaults ? Config{} : args->resolve();
    if (*keys) {
      // The registry's help is each key's one description (the studio's tooltips show the same text). A blank
      // line between sections, the key column as wide as the longest key.
      const std::vector<KeyDoc> docs = config_keys(c);
      int width = 0;
      for (const KeyDoc& k : docs) width = std::max(width, static_cast<int>(k.key.size()));
      std::string section;
      for (const KeyDoc& k : docs) {
        const size_t dot = k.key.find('.');
        const std::string this_section = dot == std::string::npos ? "." : k.key.substr(0, dot);  // "." = top level
        if (!section.empty() && this_section != section) std::printf("\n");
        section = this_section;
        std::printf("%-*s %-6s %-12s %s\n", width, k.key.c_str(), k.type.c_str(), k.value.c_str(), k.help.c_str());
      }
    } else {
      std::printf("%s\n", config_to_json(c).c_str());
    }
  });
}

}  // namespace tokamak::cli
