// `tokamak export`: a checkpoint's model in another format. Today: Hugging Face GPT-2 (`--format hf`), a folder
// that transformers' GPT2LMHeadModel.from_pretrained(DIR) loads.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/tokamak/commands.h"
#include "engine/generate/generate.h"
#include "engine/model/gpt.h"
#include "engine/core/data/tokenizer.h"
#include "engine/model/hf.h"
#include "engine/model/hf_tokenizer.h"
#include "engine/core/util/error.h"

namespace tokamak::cli {
namespace {

struct ExportArgs {
  std::string checkpoint, format = "hf", out;
};

void run_export(const ExportArgs& a) {
  if (a.format != "hf")
    throw Error("export format '" + a.format + "' is not known", "use --format hf (Hugging Face GPT-2)");
  auto model = load_for_sampling(a.checkpoint, "cpu");
  export_hf(*model, a.out);
  const bool gpt2_vocab = model->options().vocab_size == Tokenizer::kEndOfText + 1;
  if (gpt2_vocab) export_hf_tokenizer(Tokenizer::gpt2(), a.out, model->options().context);
  std::fprintf(
      stderr, "exported %s to %s (config.json, model.safetensors%s)\n", a.checkpoint.c_str(), a.out.c_str(),
      gpt2_vocab ? ", vocab.json, merges.txt, tokenizer_config.json" : "; no tokenizer: not GPT-2's vocabulary");
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "write a checkpoint's model in another format");
  cmd->add_option("--checkpoint", a->checkpoint, "checkpoint written by `tokamak train`")->required();
  cmd->add_option("--format", a->format, "hf: a Hugging Face GPT-2 folder (config.json, model.safetensors)");
  cmd->add_option("--out", a->out, "folder to write")->required();
  cmd->callback([a] { run_export(*a); });
}

}  // namespace tokamak::cli
