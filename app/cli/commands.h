// The `tokamak` subcommands. Each cmd_*.cpp adds one subcommand to the CLI11 app; main.cpp only wires them.
#pragma once
namespace CLI {
class App;
}

namespace tokamak::cli {
void add_train_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_config_command(CLI::App& app);
void add_runs_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_find_batch_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_remote_command(CLI::App& app);
void add_slurm_command(CLI::App& app);
void add_queue_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
}  // namespace tokamak::cli
