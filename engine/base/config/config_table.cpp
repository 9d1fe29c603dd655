// The effective configuration as a text table, derived values included (llm.c prints one at start).
#include <cstdio>

#include "engine/base/config/config.h"
#include "engine/base/config/config_table.h"

namespace tokamak {

std::string format_config_table(const Config& c, const std::vector<std::pair<std::string, std::string>>& derived) {
  std::string out;
  auto row = [&](const std::string& k, const std::string& v) {
    char buf[512];
    std::snprintf(buf, sizeof buf, "| %-28s | %-40s |\n", k.c_str(), v.c_str());
    out += buf;
  };
  std::string rule = "+" + std::string(30, '-') + "+" + std::string(42, '-') + "+\n";
  out += rule;
  row("setting", "value");
  out += rule;
  for (const KeyDoc& k : config_keys(c)) row(k.key, k.type == "string" ? "\"" + k.value + "\"" : k.value);
  out += rule;
  row("derived: train context (T)", std::to_string(train_context(c)));
  row("derived: grad accumulation", std::to_string(grad_accum_steps(c)));
  row("derived: tokens per step", std::to_string(tokens_per_step(c)));
  row("derived: padded vocabulary", std::to_string(padded_vocab(c.model)));
  for (const auto& [k, v] : derived) row("derived: " + k, v);
  out += rule;
  return out;
}

}  // namespace tokamak
