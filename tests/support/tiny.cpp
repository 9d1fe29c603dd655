// The tiny runs' shapes (see tiny.h); the files made from them are tiny_files.cpp's (LibTorch) and, for the suites
// that link no LibTorch, tiny_files_tool.cpp's.
#include "tests/support/tiny.h"

#include "tests/support/cli_runner.h"

namespace tokamak::test {
ModelConfig tiny_model(int64_t vocab_size) {
  ModelConfig m;
  m.n_layer = 2, m.n_head = 2, m.n_embd = 32, m.context = 16, m.vocab_size = vocab_size, m.vocab_pad_multiple = 1;
  return m;
}

std::vector<std::string> tiny_run_overrides(const std::vector<std::string>& more) {
  std::vector<std::string> all = {"model.n_layer=1", "model.n_head=2", "model.n_embd=32", "model.context=32"};
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

QStringList tiny_run_args(const std::vector<std::string>& more) { return set_args(tiny_run_overrides(more)); }

std::vector<std::string> quiet_run_overrides(const std::string& data, int steps, const std::vector<std::string>& more) {
  std::vector<std::string> sets;
  if (!data.empty()) sets.push_back("data.path=" + data);
  for (const char* kv : {"train.batch_size=2", "train.log_every=1", "sample.every=-1", "eval.every=0", "threads=1"})
    sets.emplace_back(kv);
  sets.push_back("train.steps=" + std::to_string(steps));
  sets.insert(sets.end(), more.begin(), more.end());
  return tiny_run_overrides(sets);
}

std::vector<std::string> two_block_run_overrides(const std::string& data, const std::vector<std::string>& more) {
  std::vector<std::string> sets = {"data.path=" + data,       "model.n_layer=2", "train.batch_size=4",
                                   "train.log_every=1",       "eval.every=0",    "sample.every=-1",
                                   "schedule.warmup_steps=2", "threads=1"};
  sets.insert(sets.end(), more.begin(), more.end());
  return tiny_run_overrides(sets);
}

}  // namespace tokamak::test
