// The effective configuration as a text table (see config_table.cpp).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tokamak {
struct Config;
// `derived` adds rows the config cannot know by itself (parameters, device name, threads, FLOPs per token).
std::string format_config_table(const Config& config,
                                const std::vector<std::pair<std::string, std::string>>& derived = {});
}  // namespace tokamak
