// Preparing and running evaluation tasks, and recording them (see eval_task.h).
#include "engine/torch/eval/eval_task.h"

#include <filesystem>

#include "engine/base/data/dataset.h"
#include "engine/torch/eval/accuracy.h"
#include "engine/torch/eval/perplexity.h"
#include "engine/torch/eval/scoring.h"
#include "engine/torch/generate/generate.h"
#include "engine/torch/device/device.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/store/run_store.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/util/error.h"

namespace tokamak {
namespace {

std::string with_commas(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

PreparedEvalTask prepare_eval_task(const EvalTaskSpec& spec, const EvalOptions& options) {
  PreparedEvalTask t;
  t.spec = spec;
  if (spec.kind == EvalTaskSpec::Kind::kHellaSwag) {
    t.items = read_hellaswag(spec.path, options.limit);
    t.description = std::filesystem::path(spec.path).filename().string() + ": " +
                    with_commas(static_cast<int64_t>(t.items.size())) + " items";
    return t;
  }
  Progress progress;
  if (options.progress)
    progress = [&](uint64_t done, uint64_t total) {
      return options.progress("tokenizing " + spec.path, static_cast<int64_t>(done), static_cast<int64_t>(total));
    };
  PreparedDataset data = prepare_dataset(spec.path, progress, options.jsonl_field);
  t.shards = data.train_shards;
  t.shards.insert(t.shards.end(), data.val_shards.begin(), data.val_shards.end());
  t.description = data.description;
  return t;
}

Metrics run_eval_task(GPTImpl& model, const PreparedEvalTask& task, const EvalOptions& options) {
  Metrics m;
  const std::string what = "evaluating " + task.spec.text;
  if (task.spec.kind == EvalTaskSpec::Kind::kHellaSwag) {
    ScoreOptions so;
    so.device = options.device, so.precision = options.precision;
    if (options.rows_per_batch > 0) so.rows_per_batch = options.rows_per_batch;
    if (options.progress)
      so.progress = [&](int64_t done, int64_t total) { return options.progress(what, done, total); };
    std::vector<int64_t> labels;
    for (const ChoiceItem& item : task.items) labels.push_back(item.label);
    const ChoiceAccuracy a = choice_accuracy(score_choices(model, task.items, so), labels);
    m.add("acc", a.acc);
    m.add("acc_norm", a.acc_norm);
    m.add_count("n", a.n);
    m.add("acc_low", a.acc_ci.low);
    m.add("acc_high", a.acc_ci.high);
    m.add("acc_norm_low", a.acc_norm_ci.low);
    m.add("acc_norm_high", a.acc_norm_ci.high);
    return m;
  }
  PerplexityOptions po;
  po.device = options.device, po.precision = options.precision, po.max_windows = options.limit;
  if (options.rows_per_batch > 0) po.rows_per_batch = options.rows_per_batch;
  if (options.progress) po.progress = [&](int64_t done, int64_t total) { return options.progress(what, done, total); };
  // Token ids beyond the model's vocabulary (shards of another tokenizer) would fail inside the embedding.
  PreparedDataset ids;
  ids.train_shards = task.shards;
  check_token_ids(ids, model.options().vocab_size);
  const PerplexityResult r = perplexity(model, task.shards, po);
  m.add("ppl", r.ppl);
  m.add("loss", r.loss);
  m.add_count("tokens", r.tokens);
  return m;
}

Metrics as_run_metrics(const EvalTaskSpec& spec, const Metrics& results) {
  Metrics out;
  for (const MetricValue& v : results) out.add({eval_metric_key(spec, v.key), v.value, v.integer});
  return out;
}

CheckpointEvaluation evaluate_checkpoint(const std::string& checkpoint, const std::string& task,
                                         const std::string& device, EvalOptions options) {
  CheckpointEvaluation e;
  e.spec = parse_eval_task(task);  // a bad spec or a missing checkpoint fails before any work
  if (!std::filesystem::exists(checkpoint))
    throw Error("checkpoint '" + checkpoint + "' does not exist",
                "give a checkpoint written by `tokamak train` (step_N.safetensors) or a Hugging Face GPT-2 folder");
  options.device = parse_device(device);
  PreparedEvalTask prepared = prepare_eval_task(e.spec, options);
  CheckpointInfo info;
  auto model = load_for_sampling(checkpoint, device, &info);  // fp32, eval mode, any device
  options.precision = Precision::kFp32;
  e.results = run_eval_task(*model, prepared, options);
  e.run_uid = info.run_uid, e.step = info.step, e.description = prepared.description;
  return e;
}

bool record_evaluation(const std::string& db_path, const CheckpointEvaluation& evaluation) {
  if (evaluation.run_uid.empty()) return false;
  if (!std::filesystem::exists(db_path.empty() ? default_db_path() : db_path)) return false;  // no store, no run
  RunStore store(db_path, RunStore::Mode::existing);
  const int64_t run = store.find_uid(evaluation.run_uid);
  if (run == 0) return false;
  MetricRow row;
  row.step = evaluation.step;
  for (const MetricValue& v : as_run_metrics(evaluation.spec, evaluation.results)) row.set(v.key, v.value, v.integer);
  store.transaction([&] { store.add_metrics(run, {row}); });
  return true;
}

}  // namespace tokamak
