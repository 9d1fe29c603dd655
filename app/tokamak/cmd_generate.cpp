// `tokamak generate`: text from a checkpoint or a Hugging Face GPT-2 folder (engine/generate does the work).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/tokamak/cli_checks.h"
#include "app/tokamak/commands.h"
#include "engine/device/cpu_setup.h"
#include "engine/generate/generate.h"

namespace tokamak::cli {
namespace {

struct GenerateArgs {
  std::string checkpoint, prompt, device = "cpu";
  int64_t tokens = 100, top_k = 40, seed = 1337;
  double temperature = 0.8;
  bool no_kv_cache = false;
};

void run_generate(const GenerateArgs& a) {
  configure_cpu(0);
  SampleOptions so;
  so.max_new_tokens = a.tokens, so.temperature = a.temperature, so.top_k = a.top_k,
  so.seed = static_cast<uint64_t>(a.seed);
  so.kv_cache = !a.no_kv_cache;
  std::string text = generate_from_checkpoint(a.checkpoint, a.prompt, so, a.device).text;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "generate text from a checkpoint");
  cmd->add_option("--checkpoint", a->checkpoint,
                  "checkpoint written by `tokamak train`, or a Hugging Face GPT-2 folder")
      ->required();
  cmd->add_option("--prompt", a->prompt, "text to continue")->required();
  cmd->add_option("--tokens", a->tokens, "tokens to generate")->check(above_zero());
  cmd->add_option("--temperature", a->temperature, "sampling temperature (> 0)")->check(above_zero());
  cmd->add_option("--top-k", a->top_k, "sample from the k most likely tokens (0 = all)")->check(zero_or_more());
  cmd->add_option("--seed", a->seed, "random seed");
  cmd->add_option("--device", a->device, "cpu | cuda | cuda:N");
  cmd->add_flag("--no-kv-cache", a->no_kv_cache, "run the whole window for every token (for comparison)");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace tokamak::cli
