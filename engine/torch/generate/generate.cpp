// Loading a checkpoint for sampling, and sampling text (see generate.h).
#include "engine/torch/generate/generate.h"

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/data/sampled_text.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"

namespace tokamak {

std::shared_ptr<GPTImpl> load_for_sampling(const std::string& checkpoint, const std::string& device_name,
                                           CheckpointInfo* info) {
  // A Hugging Face GPT-2 folder samples as well as a checkpoint (its config.json gives the sizes).
  const bool hf = is_hf_weights(checkpoint);
  if (hf && !is_directory(checkpoint))
    throw Error("'" + checkpoint + "' is a safetensors file without a config",
                "pass the folder that holds it and config.json");
  CheckpointInfo read;
  Config c;
  if (hf) c.model = hf_model_config(checkpoint, c.model);
  else read = read_checkpoint_info(checkpoint), c = config_from_json(read.config_json);
  // Sampling needs none of the training switches; these work on every device.
  c.speed.precision = Precision::kFp32;
  c.speed.layers = portable_layers(c.speed.layers);
  c.speed.pin_memory = PinMemory::kOff, c.speed.cuda_graphs = false, c.speed.activation_checkpointing = false;
  c.device = device_name, c.dist.gpus = 1;
  validate_config(c, cuda_device_count());
  const c10::Device device = parse_device(c.device);
  auto model = std::make_shared<GPTImpl>(GPTOptions::from_config(c.model, c.speed));
  model->to(device);
  if (hf) load_hf_weights(*model, checkpoint);
  else load_checkpoint(checkpoint, *model, nullptr, /*restore_rng=*/false, device);
  model->eval();
  if (info) *info = read;
  return model;
}

std::string sample_text(GPTImpl& model, const std::string& prompt, const SampleOptions& options,
                        const c10::Device& device) {
  const Tokenizer& tok = Tokenizer::gpt2();
  SampleOptions o = options;
  // A character split between the last tokens would end the text in U+FFFD: the tokens that complete it are
  // sampled too (a UTF-8 character has at most four bytes, so at most three more tokens).
  o.more = [&](const std::vector<int32_t>& out) {
    return static_cast<int64_t>(out.size()) < options.max_new_tokens + 3 && utf8_open_tail(tok.decode(out)) > 0;
  };
  return sampled_text(tok, prompt, generate(model, tok.encode(prompt), o, device));
}

Generation generate_from_checkpoint(const std::string& checkpoint, const std::string& prompt,
                                    const SampleOptions& options, const std::string& device) {
  CheckpointInfo info;
  auto model = load_for_sampling(checkpoint, device, &info);
  return {sample_text(*model, prompt, options, parse_device(device)), info.step};
}

}  // namespace tokamak
