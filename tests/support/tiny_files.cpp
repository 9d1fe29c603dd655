// The tiny models as files (see tiny.h), made in this process with LibTorch.
// LibTorch before Qt (tiny.h): Qt's `slots` macro breaks LibTorch's headers.
#include <torch/utils.h>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"
#include "tests/support/tiny.h"

namespace tokamak::test {
std::string save_tiny_checkpoint(const std::string& dir, int64_t step, const std::string& run_uid, uint64_t seed) {
  Config c;
  apply_overrides(c, tiny_run_overrides());
  torch::manual_seed(seed);
  GPT model(GPTOptions::from_config(c.model, c.speed));
  const std::string path = checkpoint_path(dir, step);
  prepare_checkpoint_dir(dir, 0);
  save_checkpoint(path, *model, nullptr, {run_uid, config_to_json(c), step, 0, "cpu"}, c10::kCPU);
  return path;
}

void export_tiny_hf(const std::string& dir, int64_t vocab_size, uint64_t seed) {
  torch::manual_seed(seed);
  GPT model(GPTOptions::from_config(tiny_model(vocab_size), SpeedConfig{}));
  export_hf(*model, dir);
}
}  // namespace tokamak::test
