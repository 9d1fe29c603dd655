// Evaluation task specs: "hellaswag:PATH" (multiple-choice accuracy on HellaSwag's JSON-lines) and
// "ppl:PATH" (perplexity over any dataset source), as `tokamak eval --task` and `eval.tasks` (a comma-
// separated list) spell them. Parsing and checking live here, without LibTorch, so config validation can
// call eval_task_problems(); running them is engine/torch/eval.
#pragma once
#include <string>
#include <vector>

namespace tokamak {

struct Config;

struct EvalTaskSpec {
  enum class Kind { kHellaSwag, kPerplexity } kind = Kind::kHellaSwag;
  std::string path;  // the HellaSwag file, or the dataset source ("default" = the default corpus)
  std::string name;  // "hellaswag", or "ppl/<stem of the path>": the middle of its metric keys
  std::string text;  // the spec as written
};

// Throws tokamak::Error for anything but "hellaswag:PATH" or "ppl:PATH" (an empty PATH included).
EvalTaskSpec parse_eval_task(const std::string& spec);
// Comma-separated specs; empty entries are ignored. Throws on the first bad one.
std::vector<EvalTaskSpec> parse_eval_tasks(const std::string& list);

// The store's (and the run's) name of one result: "eval/hellaswag/acc", "eval/ppl/jargon/ppl".
std::string eval_metric_key(const EvalTaskSpec& spec, const std::string& result);

// Problems of eval.tasks, each a line naming the key: a bad spec, a HellaSwag file that is missing,
// two tasks that would write the same metric keys. The paths of perplexity sources are checked when the
// run prepares them (as data.path is). Empty when eval.tasks is empty.
std::vector<std::string> eval_task_problems(const Config& config);

}  // namespace tokamak
