// Evaluation task specs (see eval_tasks.h).
#include "engine/base/config/eval_tasks.h"

#include <cctype>
#include <filesystem>

#include "engine/base/config/config.h"
#include "engine/base/util/error.h"

namespace tokamak {
namespace {

const char* kSpecHint =
    "write hellaswag:FILE.jsonl (HellaSwag's JSON-lines) or ppl:PATH (a text file, folder, "
    ".bin shards, FILE.jsonl or 'default')";

// A metric-key-safe short name of a data source: its file or folder stem, [A-Za-z0-9_-] only.
std::string source_name(const std::string& path) {
  if (path == "default") return "default";
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  std::string stem = p.stem().string(), out;
  for (char c : stem) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "data" : out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

}  // namespace

EvalTaskSpec parse_eval_task(const std::string& spec_text) {
  const std::string spec = trim(spec_text);
  const size_t colon = spec.find(':');
  if (colon == std::string::npos)
    throw Error("evaluation task '" + spec + "' has no kind (expected KIND:PATH)", kSpecHint);
  EvalTaskSpec t;
  t.text = spec;
  const std::string kind = spec.substr(0, colon);
  t.path = spec.substr(colon + 1);
  if (kind == "hellaswag") t.kind = EvalTaskSpec::Kind::kHellaSwag;
  else if (kind == "ppl") t.kind = EvalTaskSpec::Kind::kPerplexity;
  else throw Error("evaluation task '" + spec + "' has unknown kind '" + kind + "'", kSpecHint);
  if (t.path.empty()) throw Error("evaluation task '" + spec + "' names no path", kSpecHint);
  t.name = t.kind == EvalTaskSpec::Kind::kHellaSwag ? "hellaswag" : "ppl/" + source_name(t.path);
  return t;
}

std::vector<EvalTaskSpec> parse_eval_tasks(const std::string& list) {
  std::vector<EvalTaskSpec> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    const std::string one = trim(list.substr(start, comma - start));
    if (!one.empty()) out.push_back(parse_eval_task(one));
    start = comma + 1;
  }
  return out;
}

std::string eval_metric_key(const EvalTaskSpec& spec, const std::string& result) {
  return "eval/" + spec.name + "/" + result;
}

std::vector<std::string> eval_task_problems(const Config& config) {
  std::vector<std::string> problems;
  std::vector<EvalTaskSpec> tasks;
  try {
    tasks = parse_eval_tasks(config.eval.tasks);
  } catch (const Error& e) {
    return {"eval.tasks: " + std::string(e.what())};
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    const EvalTaskSpec& t = tasks[i];
    std::error_code ec;
    if (t.kind == EvalTaskSpec::Kind::kHellaSwag && !std::filesystem::is_regular_file(t.path, ec))
      problems.push_back("eval.tasks: HellaSwag file '" + t.path +
                         "' does not exist or is not a file (hint: give the path of a .jsonl file)");
    for (size_t j = 0; j < i; ++j)
      if (tasks[j].name == t.name)
        problems.push_back("eval.tasks: '" + tasks[j].text + "' and '" + t.text + "' would both record eval/" + t.name +
                           "/... (hint: evaluate one of them, or rename a file)");
  }
  return problems;
}

}  // namespace tokamak
