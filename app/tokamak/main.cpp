// tokamak: the command line. `runs`, `tokenize`, `config`, `datasets`, `remote`, `queue` and `sweep` run here without
// LibTorch (it takes ~0.5 s just to initialise); `train`, `generate`, `bench`, `export`, `eval` and `find-batch` are
// handed, command line and all, to tokamak-engine in the same folder. Every failure ends as one line on stderr and a
// non-zero exit code.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "app/tokamak/cmd_datasets.h"
#include "app/cli/commands.h"
#include "app/cli/run_app.h"
#include "engine/base/util/version.h"

namespace {

constexpr const char* kEngineCommands[] = {"train", "generate", "bench", "export", "eval", "find-batch", "plan"};

bool is_engine_command(const char* arg) {
  for (const char* c : kEngineCommands)
    if (std::strcmp(arg, c) == 0) return true;
  return false;
}

int run_engine(char** argv) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string engine = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "tokamak-engine";
  argv[0] = const_cast<char*>(engine.c_str());
  ::execv(engine.c_str(), argv);
  std::fprintf(stderr, "tokamak: cannot start %s: %s (hint: rebuild with scripts/build.sh or reinstall)\n",
               engine.c_str(), std::strerror(errno));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && is_engine_command(argv[1])) return run_engine(argv);
  CLI::App app{"tokamak: train GPT-style language models fast (headless engine of Tokamak Studio)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", tokamak::version_line());
  // Listed for --help; reaching their callbacks means an option came before the command name.
  app.add_subcommand("train", "train a model (on the default corpus and the nano preset by default)")->allow_extras();
  app.add_subcommand("generate", "generate text from a checkpoint")->allow_extras();
  app.add_subcommand("bench", "run a ladder of speed-ups and print its scoreboard")->allow_extras();
  app.add_subcommand("export", "write a checkpoint's model in another format (Hugging Face GPT-2)")->allow_extras();
  app.add_subcommand("eval", "evaluate a checkpoint: HellaSwag accuracy or perplexity")->allow_extras();
  app.add_subcommand("find-batch", "the largest batch that trains on a GPU (doubling from 1)")->allow_extras();
  app.add_subcommand("plan", "will it fit, how fast, how long and what it costs, on each catalog device and this one")
      ->allow_extras();
  tokamak::cli::add_tokenize_command(app);
  tokamak::cli::add_config_command(app);
  tokamak::cli::add_runs_command(app);
  tokamak::cli::add_remote_command(app);
  tokamak::cli::add_slurm_command(app);
  tokamak::cli::add_queue_command(app);
  tokamak::cli::add_sweep_command(app);
  tokamak::cli::add_datasets_command(app);
  return tokamak::cli::run_app(app, argc, argv);
}
