// `tokamak generate`: text from a checkpoint, a stored run's checkpoint or a Hugging Face GPT-2 folder (engine/torch/generate
// does the work). With --keep the prompt, the settings and the text are kept with the run (the studio's playground
// calls this); with --json the text streams as events and ends in one result line.
#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/tokamak-engine/cli_checks.h"
#include "app/cli/commands.h"
#include "app/tokamak-engine/run_checkpoint.h"
#include "engine/base/data/sampled_text.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/utf8.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/generate/generate.h"

namespace tokamak::cli {
namespace {

struct GenerateArgs {
  std::string checkpoint, run, db, prompt, device = "cpu";
  int64_t tokens = 100, top_k = 40, seed = 1337, step = 0;
  double temperature = 0.8, top_p = 1.0;
  bool no_kv_cache = false, stream = false, ids = false, keep = false, json = false;
};

void print_json(const nlohmann::json& j) {
  std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  std::fflush(stdout);
}

void run_generate(const GenerateArgs& a) {
  if (a.checkpoint.empty() == a.run.empty())
    throw Error(a.run.empty() ? "no model to sample from" : "--checkpoint and --run both name the model",
                "give --checkpoint PATH or --run ID");
  if (a.keep && a.run.empty()) throw Error("--keep keeps the text with a run", "name the run with --run ID");
  if (a.step > 0 && a.run.empty()) throw Error("--step picks one of a run's checkpoints", "name the run with --run ID");
  RunCheckpoint from;
  if (!a.run.empty()) from = run_checkpoint(a.db, a.run, a.step);
  // The store must take the try before the text is made: a read-only one (an older worker holds its queue) would
  // lose it after the wait.
  std::unique_ptr<RunStore> keep_in;
  if (a.keep) {
    keep_in = std::make_unique<RunStore>(from.db, RunStore::Mode::existing);
    if (keep_in->read_only() || keep_in->schema() < 9)
      throw Error("--keep: the run store " + keep_in->path() + " cannot keep tries now" +
                      (keep_in->read_only_note().empty() ? "" : " (" + keep_in->read_only_note() + ")"),
                  "run without --keep, or once the older Tokamak's queue worker has ended");
  }
  const std::string checkpoint = a.run.empty() ? a.checkpoint : from.path;
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
    if (a.json) print_json({{"event", "token"}, {"text", text.substr(printed)}});
    else std::fwrite(text.data() + printed, 1, text.size() - printed, stdout), std::fflush(stdout);
    printed = text.size();
  };
  std::vector<int32_t> made;
  so.on_token = [&](const std::vector<int32_t>& out) {
    made = out;
    if (a.stream) print_new(sampled_text(Tokenizer::gpt2(), a.prompt, out));
  };
  const Generation g = generate_from_checkpoint(checkpoint, a.prompt, so, a.device);
  const nlohmann::json options = {
      {"temperature", a.temperature}, {"top_k", a.top_k}, {"top_p", a.top_p}, {"tokens", a.tokens}, {"seed", a.seed}};
  int64_t kept = 0;
  if (keep_in) {
    RunStore& store = *keep_in;
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    // Kept as UTF-8 (a stray byte as U+FFFD), as every export writes it: an export and import gives back the same try.
    const PlayRow play{0, g.step, utf8_repaired(a.prompt), utf8_repaired(g.text), options.dump(), now};
    store.transaction([&] { kept = store.add_play(from.run_id, play); });
  }
  if (a.json) {
    if (a.stream) print_new(g.text);
    print_json({{"text", g.text}, {"ids", made}, {"step", g.step}, {"options", options}, {"kept", kept}});
    return;
  }
  if (a.ids) {
    for (size_t i = 0; i < made.size(); ++i) std::printf("%s%d", i ? " " : "", made[i]);
    std::fputc('\n', stdout);
    return;
  }
  print_new(g.text);
  std::fputc('\n', stdout);
  if (a.keep) std::fprintf(stderr, "kept with run %s (%s)\n", a.run.c_str(), from.run_name.c_str());
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "generate text from a checkpoint");
  cmd->add_option("--checkpoint", a->checkpoint,
                  "checkpoint written by `tokamak train`, or a Hugging Face GPT-2 folder");
  cmd->add_option("--run", a->run, "a stored run's id or uid: its newest checkpoint (or --step's)");
  // Whole numbers are checked before CLI11 converts them: one too big for an int64 was silently clamped.
  cmd->add_option("--step", a->step, "with --run: the checkpoint saved at this step")
      ->check(count_between(1, 1000000000000000));
  cmd->add_option("--db", a->db, "run store for --run (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_flag("--keep", a->keep,
                "keep the prompt, settings and text with the run (the studio's playground shows them)");
  cmd->add_option("--prompt", a->prompt, "text to continue")->required();
  cmd->add_option("--tokens", a->tokens, "tokens to generate")->check(count_between(1, 1000000));
  cmd->add_option("--temperature", a->temperature, "sampling temperature (> 0)")->check(above_zero());
  cmd->add_option("--top-k", a->top_k, "sample from the k most likely tokens (0 = all)")
      ->check(count_between(0, 10000000));
  cmd->add_option("--top-p", a->top_p,
                  "sample from the most likely tokens whose probabilities reach p (0 < p <= 1; 1 = all)")
      ->check(above_zero(1));  // refused before the model loads: 0, nan and past 1 alike
  auto* stream = cmd->add_flag("--stream", a->stream, "print each token as it is made");
  cmd->add_flag("--json", a->json,
                "print JSON: with --stream a {\"event\":\"token\",\"text\":…} line a token, then one result line "
                "(text, ids, step, options, kept)");
  cmd->add_flag("--ids", a->ids,
                "print the token ids of the continuation instead of the text (to compare with "
                "another program's tokens)")
      ->excludes(stream)
      ->excludes("--json");
  cmd->add_option("--seed", a->seed, "random seed")->check(count_between(0, INT64_MAX));
  cmd->add_option("--device", a->device, "cpu | cuda | cuda:N");
  cmd->add_flag("--no-kv-cache", a->no_kv_cache, "run the whole window for every token (for comparison)");
  cmd->callback([a] { run_generate(*a); });
}

}  // namespace tokamak::cli
