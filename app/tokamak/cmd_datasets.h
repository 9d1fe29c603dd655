// `tokamak datasets`: apart from commands.h, which every tokamak-engine command includes (a LibTorch rebuild).
#pragma once
namespace CLI {
class App;
}

namespace tokamak::cli {
void add_datasets_command(CLI::App& app);
// `tokamak datasets get` (cmd_datasets_get.cpp).
void add_datasets_get_command(CLI::App* datasets);
}  // namespace tokamak::cli
