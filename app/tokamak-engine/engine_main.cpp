// tokamak-engine: the commands of `tokamak` that need LibTorch (train, generate, bench, export, eval,
// find-batch). Started by `tokamak` with its command line unchanged; also runs on its own, and its
// data-parallel workers are copies of it. Every failure ends as one line on stderr and a non-zero exit code.
#include <CLI/CLI.hpp>

#include "app/cli/commands.h"
#include "app/cli/run_app.h"
#include "app/tokamak-engine/signals.h"
#include "engine/base/util/version.h"
#include "engine/torch/train/torch_error.h"

int main(int argc, char** argv) {
  tokamak::cli::ignore_broken_pipes();  // a closed stdout must not end a run (signals.h)
  CLI::App app{"tokamak: train GPT-style language models fast (headless engine of Tokamak Studio)", "tokamak"};
  app.require_subcommand(1);
  app.set_version_flag("--version", tokamak::version_line());
  tokamak::cli::add_train_command(app);
  tokamak::cli::add_generate_command(app);
  tokamak::cli::add_bench_command(app);
  tokamak::cli::add_export_command(app);
  tokamak::cli::add_eval_command(app);
  tokamak::cli::add_find_batch_command(app);
  tokamak::cli::add_plan_command(app);
  return tokamak::cli::run_app(app, argc, argv, &tokamak::torch_error_text);
}
