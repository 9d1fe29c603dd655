// `tokamak generate`: text from a checkpoint.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/tokamak/commands.h"
#include "engine/config/choices.h"
#include "engine/config/config.h"
#include "engine/data/tokenizer.h"
#include "engine/generate/sampler.h"
#include "engine/model/gpt.h"
#include "engine/train/checkpoint.h"
#include "engine/train/device.h"

namespace tokamak::cli {
namespace {

struct GenerateArgs {
  std::string checkpoint, prompt, device = "cpu";
  int64_t tokens = 100, top_k = 40, seed = 1337;
  double temperature = 0.8;
};

void run_generate(const GenerateArgs& a) {
  CheckpointInfo info = read_checkpoint_info(a.checkpoint);
  Config c = config_from_json(info.config_json);
  c.device = a.device;
  // Training-only switches (e.g. CUDA graphs on a checkpoint made on a GPU) do not matter for sampling.
  c.opt.precision = "fp32", c.opt.layers = portable_layers(c.opt.layers);
  c.opt.pin_memory = "false", c.opt.cuda_graphs = false, c.dist.gpus = 1;
  validate_config(c, cuda_device_count());
  configure_cpu(c.threads);
  c10::Device device = parse_device(c.device);
  GPT model(GPTOptions::from_config(c.model, c.opt));
  model->to(device);
  load_checkpoint(a.checkpoint, *model, nullptr, /*restore_rng=*/false, device);
  const Tokenizer& tok = Tokenizer::gpt2();
  SampleOptions so;
  so.max_new_tokens = a.tokens, so.temperature = a.temperature, so.top_k = a.top_k, so.seed = static_cast<uint64_t>(a.seed);
  auto ids = generate(*model, tok.encode(a.prompt), so, device);
  std::string text = a.prompt + tok.decode(ids);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "generate text from a checkpoint");
  cmd->add_option("--checkpoint", a->checkpoint, "checkpoint written by `tokamak train`")->required();
  cmd->add_option("--prompt", a->prompt, "text to continue")->required();
  cmd->add_option("--tokens", a->tokens, "tokens to generate")->check(CLI::PositiveNumber);
  cmd->add_option("--temperature", a->temperature, "sampling temperature (> 0)")->check(CLI::PositiveNumber);
  cmd->add_option("--top-k", a->top_k, "sample from the k most likely tokens (0 = all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", a->seed, "random seed");
  cmd->add_option("--device", a->device, "cpu | cuda | cuda:N");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace tokamak::cli
