#include "tiny.h"

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

QStringList tiny_run_args(const std::vector<std::string>& more) {
  QStringList args;
  for (const std::string& kv : tiny_run_overrides(more)) args << "--set" << QString::fromStdString(kv);
  return args;
}
}  // namespace tokamak::test
