// `tokamak datasets`: apart from commands.h, which every tokamak-engine command includes (a LibTorch rebuild).
#pragma once
namespace CLI {
class App;
}

namespace tokamak::cli {
void add_datasets_command(CLI::App& app);
}  // namespace tokamak::cli
