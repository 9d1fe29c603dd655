// `tokamak generate`: text from a checkpoint or a Hugging Face GPT-2 folder (engine/generate does the work).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/tokamak/cli_checks.h"
#include "app/tokamak/commands.h"
#include "engine/core/data/sampled_text.h"
#include "engine/core/data/tokenizer.h"
#include "engine/device/cpu_setup.h"
#include "engine/generate/generate.h"

namespace tokamak::cli {
namespace {

struct GenerateArgs {
  std::string checkpoint, prompt, device = "cpu";
  int64_t tokens = 100, top_k = 40, seed = 1337;
  double temperature = 0.8, top_p = 1.0;
  bool no_kv_cache = false, stream = false, ids = false;
};

void run_generate(const GenerateArgs& a) {
  configure_cpu(0);
  SampleOptions so;
  so.max_new_tokens = a.tokens, so.temperature = a.temperature, so.top_k = a.top_k,
  so.seed = static_cast<uint64_t>(a.seed);
  so.kv_cache = !a.no_kv_cache, so.top_p = a.top_p;
  // Streamed: each token's text as it comes, held back while it ends inside a UTF-8 character; what is printed
  // is always a prefix of the whole text, which comes out the same as without --stream.
  size_t printed = 0;
  const auto print_new = [&](const std::string& text) {
    if (text.size() <= printed) return;
    std::fwrite(text.data() + printed, 1, text.size() - printed, stdout);
    std::fflush(stdout);
    printed = text.size();
  };
  std::vector<int32_t> made;
  if (a.ids) so.on_token = [&](const std::vector<int32_t>& out) { made = out; };
  else if (a.stream)
    so.on_token = [&](const std::vector<int32_t>& out) { print_new(sampled_text(Tokenizer::gpt2(), a.prompt, out)); };
  const std::string text = generate_from_checkpoint(a.checkpoint, a.prompt, so, a.device).text;
  if (a.ids) {
    for (size_t i = 0; i < made.size(); ++i) std::printf("%s%d", i ? " " : "", made[i]);
    std::fputc('\n', stdout);
    return;
  }
  print_new(text);
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
  cmd->add_option("--top-p", a->top_p, "sample from the most likely tokens whose probabilities reach p (0 < p <= 1; 1 = all)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--stream", a->stream, "print each token as it is made");
  cmd->add_flag("--ids", a->ids, "print the token ids of the continuation instead of the text (to compare with "
                                 "another program's tokens)")->excludes("--stream");
  cmd->add_option("--seed", a->seed, "random seed");
  cmd->add_option("--device", a->device, "cpu | cuda | cuda:N");
  cmd->add_flag("--no-kv-cache", a->no_kv_cache, "run the whole window for every token (for comparison)");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace tokamak::cli
