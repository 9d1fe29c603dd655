// "Load a checkpoint and sample", once: `tokamak generate`, the studio's "Sample now" and the trainer's
// samples all come here. A checkpoint is loaded into a model built from its own config with the training-only
// switches turned off (fp32, no fused layers, no CUDA graphs), so a checkpoint from any device and precision
// samples anywhere.
#pragma once
#include <c10/core/Device.h>

#include <memory>
#include <string>

#include "engine/torch/generate/sampler.h"

namespace tokamak {

class GPTImpl;
struct CheckpointInfo;

// The model of a checkpoint, on `device` ("cpu" | "cuda" | "cuda:N", checked like the config key), in eval
// mode; *info (when given) gets the checkpoint's info.
std::shared_ptr<GPTImpl> load_for_sampling(const std::string& checkpoint, const std::string& device,
                                           CheckpointInfo* info = nullptr);

// prompt + the generated continuation as text, always valid UTF-8: a character the last token leaves open is
// completed by the tokens that follow it, or left out when the model writes none (never a U+FFFD for it).
std::string sample_text(GPTImpl& model, const std::string& prompt, const SampleOptions& options,
                        const c10::Device& device);

struct Generation {
  std::string text;  // prompt + continuation
  int64_t step = 0;  // the checkpoint's step
};

// load_for_sampling + sample_text.
Generation generate_from_checkpoint(const std::string& checkpoint, const std::string& prompt,
                                    const SampleOptions& options, const std::string& device);

}  // namespace tokamak
