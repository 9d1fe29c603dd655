// Running an evaluation task (engine/base/config/eval_tasks.h: "hellaswag:PATH" | "ppl:PATH") on a model, with its
// results as named values: the one API that `tokamak eval`, the trainer (eval.tasks) and the studio's
// "Evaluate…" use. A task is prepared once (items read and tokenized, or the dataset tokenized and cached),
// then run on a model as often as wanted.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/config/choices.h"  // Precision
#include "engine/base/config/eval_tasks.h"
#include "engine/base/run/metrics.h"
#include "engine/torch/eval/hellaswag_items.h"

namespace tokamak {

class GPTImpl;

struct EvalOptions {
  c10::Device device = c10::kCPU;
  Precision precision = Precision::kFp32;
  int64_t limit = 0;                 // > 0: the first N HellaSwag items, or the first N perplexity windows
  int64_t rows_per_batch = 0;        // 0: 16 HellaSwag rows or 8 perplexity windows per forward
  std::string jsonl_field = "text";  // for a FILE.jsonl perplexity source (data.jsonl_field)
  // (what, done, total) while preparing and while scoring; return false to cancel (an Error is thrown).
  std::function<bool(const std::string& what, int64_t done, int64_t total)> progress;
};

struct PreparedEvalTask {
  EvalTaskSpec spec;
  std::vector<ChoiceItem> items;    // HellaSwag
  std::vector<std::string> shards;  // perplexity: every shard of the source (train and validation)
  std::string description;          // one line: "hellaswag_val.jsonl: 10,042 items"
};

PreparedEvalTask prepare_eval_task(const EvalTaskSpec& spec, const EvalOptions& options);

// Results under short names, in this order. HellaSwag: acc, acc_norm (fractions), n, acc_low, acc_high,
// acc_norm_low, acc_norm_high (the 95% Wilson intervals). Perplexity: ppl, loss (nats per token), tokens.
Metrics run_eval_task(GPTImpl& model, const PreparedEvalTask& task, const EvalOptions& options);

// The same results as a run's metrics: "acc" → "eval/hellaswag/acc" (eval_metric_key).
Metrics as_run_metrics(const EvalTaskSpec& spec, const Metrics& results);

struct CheckpointEvaluation {
  EvalTaskSpec spec;
  Metrics results;      // short names, as run_eval_task
  std::string run_uid;  // the run that wrote the checkpoint; empty for a Hugging Face folder
  int64_t step = 0;     // the checkpoint's step
  std::string description;
};

// Loads a checkpoint (or a Hugging Face GPT-2 folder) on `device` ("cpu" | "cuda" | "cuda:N") in fp32 and
// runs one task spec on it. options.device is taken from `device`.
CheckpointEvaluation evaluate_checkpoint(const std::string& checkpoint, const std::string& task,
                                         const std::string& device, EvalOptions options = {});

// Adds the results to the run store at `db_path` ("" = the default) as metrics of the run that wrote the
// checkpoint, at the checkpoint's step, so exports, `runs compare` and the scoreboard show them. Returns
// false (writing nothing) when the store has no run with that uid (or the evaluation has none).
bool record_evaluation(const std::string& db_path, const CheckpointEvaluation& evaluation);

}  // namespace tokamak
