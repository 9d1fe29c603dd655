// `tokamak runs follow|control|checkpoints` and `runs list --json`: runs as their run folders show them
// (engine/base/run/run_folder.h), for readers on this machine or at the other end of an ssh connection.
#pragma once
namespace CLI {
class App;
}

namespace tokamak::cli {
// Adds `follow`, `control` and `checkpoints` to the `runs` command.
void add_run_folder_commands(CLI::App* runs);
// `runs list --json`: one JSON object per line per run folder, newest first; live_only: running or paused.
void print_run_folders(bool live_only);
}  // namespace tokamak::cli
