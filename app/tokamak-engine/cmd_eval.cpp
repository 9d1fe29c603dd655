// `tokamak eval`: one evaluation task (hellaswag:PATH | ppl:PATH) on a checkpoint or a Hugging Face GPT-2
// folder (engine/torch/eval does the work). Progress on stderr; the results on stdout, as one JSON object with
// --json. The results are recorded in the run store as metrics of the run that wrote the checkpoint, at its
// step ("eval/hellaswag/acc", ...), so `runs compare`, exports and the scoreboard show them.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/tokamak-engine/cli_checks.h"
#include "app/cli/commands.h"
#include "engine/torch/eval/eval_task.h"
#include "engine/base/store/run_store.h"
#include "engine/torch/device/cpu_setup.h"

namespace tokamak::cli {
namespace {

struct EvalArgs {
  std::string checkpoint, task, device = "cpu", db;
  int64_t limit = 0, batch = 0;
  bool json = false, no_store = false;
};

// A one-line bar on stderr, redrawn when the percentage changes.
bool show_progress(const std::string& what, int64_t done, int64_t total) {
  static int last = -1;
  if (total <= 0) return true;
  const int percent = static_cast<int>(100 * done / total);
  if (percent == last) return true;
  last = percent;
  const int filled = percent / 4;
  std::fprintf(stderr, "\r%s [%s%s] %3d%%%s", what.c_str(), std::string(filled, '#').c_str(),
               std::string(25 - filled, ' ').c_str(), percent, percent == 100 ? "\n" : "");
  if (percent == 100) last = -1;
  return true;
}

std::string human(const CheckpointEvaluation& e) {
  const Metrics& r = e.results;
  char buf[256];
  if (e.spec.kind == EvalTaskSpec::Kind::kHellaSwag)
    std::snprintf(buf, sizeof buf, "acc %.4f [%.4f, %.4f]  acc_norm %.4f [%.4f, %.4f]  n %lld  (95%% Wilson)",
                  r.get("acc"), r.get("acc_low"), r.get("acc_high"), r.get("acc_norm"), r.get("acc_norm_low"),
                  r.get("acc_norm_high"), static_cast<long long>(r.get("n")));
  else
    std::snprintf(buf, sizeof buf, "ppl %.4f  loss %.4f  tokens %lld", r.get("ppl"), r.get("loss"),
                  static_cast<long long>(r.get("tokens")));
  return e.spec.text + " at step " + std::to_string(e.step) + ": " + buf;
}

void run_eval(const EvalArgs& a) {
  configure_cpu(0);
  EvalOptions options;
  options.limit = a.limit, options.rows_per_batch = a.batch;
  options.progress = &show_progress;
  const CheckpointEvaluation e = evaluate_checkpoint(a.checkpoint, a.task, a.device, options);
  std::fprintf(stderr, "%s\n", e.description.c_str());

  bool recorded = false;
  if (!a.no_store) {
    recorded = record_evaluation(a.db, e);
    const std::string db = a.db.empty() ? default_db_path() : a.db;
    if (recorded)
      std::fprintf(stderr, "recorded as eval/%s/* of run %s at step %lld in %s\n", e.spec.name.c_str(),
                   e.run_uid.c_str(), static_cast<long long>(e.step), db.c_str());
    else if (e.run_uid.empty())
      std::fprintf(stderr, "not recorded: '%s' belongs to no run (a Hugging Face folder); results printed only\n",
                   a.checkpoint.c_str());
    else
      std::fprintf(stderr, "not recorded: the run that wrote it (uid %s) is not in %s; results printed only\n",
                   e.run_uid.c_str(), db.c_str());
  }
  if (!a.json) {
    std::printf("%s\n", human(e).c_str());
    return;
  }
  nlohmann::ordered_json out = {
      {"task", e.spec.text}, {"checkpoint", a.checkpoint}, {"step", e.step}};  // in this order
  if (!e.run_uid.empty()) out["run_uid"] = e.run_uid;
  for (const MetricValue& v : e.results) {
    if (v.integer) out[v.key] = static_cast<int64_t>(v.value);
    else out[v.key] = v.value;
  }
  out["recorded"] = recorded;
  std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "evaluate a checkpoint: HellaSwag accuracy or perplexity");
  cmd->add_option("--checkpoint", a->checkpoint,
                  "checkpoint written by `tokamak train`, or a Hugging Face GPT-2 folder")
      ->required();
  cmd->add_option("--task", a->task,
                  "hellaswag:FILE.jsonl (HellaSwag's JSON-lines) | ppl:PATH (text, folder, .bin shards, .jsonl, "
                  "default)")
      ->required();
  cmd->add_flag("--json", a->json, "print the results as one JSON object on stdout");
  cmd->add_option("--db", a->db, "run store to record in (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_flag("--no-store", a->no_store, "print only; record nothing");
  cmd->add_option("--limit", a->limit, "only the first N HellaSwag items or perplexity windows")
      ->check(above_zero());
  cmd->add_option("--batch", a->batch, "rows per forward (default: 16 HellaSwag rows, 8 perplexity windows)")
      ->check(above_zero());
  cmd->add_option("--device", a->device, "cpu | cuda | cuda:N");
  cmd->callback([a] { run_eval(*a); });
}

}  // namespace tokamak::cli
