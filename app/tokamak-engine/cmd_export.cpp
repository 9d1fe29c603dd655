// `tokamak export`: a checkpoint's model in another format: a Hugging Face GPT-2 folder (`--format hf`, which
// transformers' GPT2LMHeadModel.from_pretrained(DIR) loads) or one GGUF file (`--format gguf`, which llama.cpp,
// Ollama and LM Studio load). The checkpoint is named directly or as a stored run's newest one.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <sys/stat.h>

#include "app/cli/commands.h"
#include "app/tokamak-engine/run_checkpoint.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "engine/base/util/output_path.h"
#include "engine/torch/generate/generate.h"
#include "engine/torch/model/gguf_export.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"
#include "engine/torch/model/hf_tokenizer.h"

namespace tokamak::cli {
namespace {

struct ExportArgs {
  std::string checkpoint, run, db, format = "hf", type = "f16", out;
  bool type_given = false, force = false;
};

// The files --format hf makes in its folder: the folder may hold these (replaced with --force) and nothing else.
const std::vector<std::string> kHfFiles = {"config.json", "model.safetensors", "vocab.json", "merges.txt",
                                           "tokenizer_config.json"};

// The checkpoint to export and the name the file carries: --checkpoint as given, or --run's newest checkpoint.
std::string pick_checkpoint(const ExportArgs& a, std::string* run_name) {
  if (!a.checkpoint.empty() && !a.run.empty())
    throw Error("--checkpoint and --run both name the model", "give one of them");
  if (!a.checkpoint.empty()) {
    if (is_directory(a.checkpoint))
      throw Error("--checkpoint '" + a.checkpoint + "' is a folder, not a checkpoint file",
                  "name a step_N.safetensors file inside it, or give --run ID for a stored run's newest");
    return a.checkpoint;
  }
  if (a.run.empty()) throw Error("no model to export", "give --checkpoint PATH or --run ID");
  const RunCheckpoint c = run_checkpoint(a.db, a.run);
  *run_name = c.run_name;
  return c.path;
}

// A folder given as --out gets NAME-TYPE.gguf inside it.
std::string gguf_path(const std::string& out, const std::string& name, const std::string& type) {
  if (!is_directory(out)) return out;
  return out + (out.back() == '/' ? "" : "/") + safe_file_name(name) + "-" + type + ".gguf";
}

std::string folder_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.find_last_of('/');
  const std::string last = slash == std::string::npos ? path : path.substr(slash + 1);
  const size_t dot = last.rfind('.');
  return dot == std::string::npos || dot == 0 ? last : last.substr(0, dot);
}

void run_export(const ExportArgs& a) {
  if (a.format != "hf" && a.format != "gguf")
    throw Error("export format '" + a.format + "' is not known",
                "use --format hf (a Hugging Face GPT-2 folder) or --format gguf (llama.cpp, Ollama)");
  if (a.format == "hf" && a.type_given)
    throw Error("--type is for --format gguf", "leave --type out: a Hugging Face folder keeps the weights in fp32");
  const GgmlType type = parse_gguf_type(a.type);  // checked before the model loads
  std::string run_name;
  const std::string checkpoint = pick_checkpoint(a, &run_name);
  // Checked before the model loads (output_path.h): never the checkpoint, the store, a link or a device.
  OutputRule rule{"", {}, a.force, {checkpoint, a.db.empty() ? default_db_path() : a.db}};
  if (a.format == "gguf") {
    rule.what = "the GGUF file";
    rule.extensions = {".gguf"};
    const std::string named = run_name.empty() ? folder_name(checkpoint) : run_name;
    check_output_file(gguf_path(a.out, named, a.type), rule);
  } else {
    rule.what = "the Hugging Face export";
    check_output_folder(a.out, kHfFiles, rule);
  }
  CheckpointInfo info;
  auto model = load_for_sampling(checkpoint, "cpu", &info);
  if (a.format == "gguf") {
    GgufNaming naming{run_name.empty() ? folder_name(checkpoint) : run_name, info.run_uid, info.step, info.config_json};
    const std::string path = gguf_path(a.out, naming.name, a.type);
    check_output_file(path, rule);  // again: loading took a while, and the file may be there now
    export_gguf(*model, path, type, naming);
    struct stat st {};
    ::stat(path.c_str(), &st);
    std::fprintf(stderr, "exported %s (step %lld) to %s (GGUF %s, %.1f MB)\n", checkpoint.c_str(),
                 static_cast<long long>(info.step), path.c_str(), a.type.c_str(), st.st_size / 1e6);
    return;
  }
  check_output_folder(a.out, kHfFiles, rule);  // again, as for GGUF: the folder may have changed while it loaded
  export_hf(*model, a.out);
  const bool gpt2_vocab = model->options().vocab_size == Tokenizer::kEndOfText + 1;
  if (gpt2_vocab) export_hf_tokenizer(Tokenizer::gpt2(), a.out, model->options().context);
  std::fprintf(
      stderr, "exported %s to %s (config.json, model.safetensors%s)\n", checkpoint.c_str(), a.out.c_str(),
      gpt2_vocab ? ", vocab.json, merges.txt, tokenizer_config.json" : "; no tokenizer: not GPT-2's vocabulary");
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand("export", "write a checkpoint's model in another format");
  cmd->add_option("--checkpoint", a->checkpoint, "checkpoint written by `tokamak train`");
  cmd->add_option("--run", a->run, "a stored run's id or uid: its newest checkpoint");
  cmd->add_option("--db", a->db, "run store for --run (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_option("--format", a->format,
                  "hf: a Hugging Face GPT-2 folder (config.json, model.safetensors); gguf: one file for llama.cpp "
                  "and Ollama");
  cmd->add_option("--type", a->type, "gguf's weights: f32 | f16 | bf16 | q8_0 (norms and biases stay f32)")
      ->each([a](const std::string&) { a->type_given = true; });
  cmd->add_flag("--force", a->force, "replace an earlier export of the same kind (never a checkpoint, a run store, "
                                     "a link or anything that is not a plain file)");
  cmd->add_option("--out", a->out, "folder to write (hf), or the .gguf file or a folder for it (gguf)")->required();
  cmd->callback([a] { run_export(*a); });
}

}  // namespace tokamak::cli
