// What a set of Hugging Face GPT-2 weights is, read without LibTorch: the model sizes its config.json (or, for
// a bare model.safetensors, its tensor shapes) describes. The core uses it to check `model.init_from` against
// the model a config builds before any work; the engine's loader (engine/torch/model/hf.h) copies the tensors.
#pragma once
#include <string>

#include "engine/base/config/config.h"

namespace tokamak {

// True when `path` is a Hugging Face folder (config.json beside model.safetensors) or a safetensors file that
// is not a Tokamak checkpoint.
bool is_hf_weights(const std::string& path);

// The model.safetensors of a folder, or `path` itself when it is a file; an Error when a folder has none.
std::string hf_weights_file(const std::string& path);

// A folder's config.json as Tokamak's model section (n_layer, n_head, n_embd, context, vocab_size, ties).
// `base` supplies what config.json does not say.
ModelConfig hf_model_config(const std::string& folder, const ModelConfig& base);

// The sizes of the weights at `path` (a folder, or a file with or without a config.json beside it): from
// config.json when there is one, else from the tensor shapes (n_head, which shapes do not show, from `base`).
ModelConfig hf_weights_config(const std::string& path, const ModelConfig& base);

// The parameters the weights at `path` hold (GPT-2's attention-mask buffers, which some files carry, left out).
int64_t hf_weights_parameters(const std::string& path);

// "" when `m` (the model a config builds) has the sizes of the weights at m.init_from, else the problem and
// the assignments that fix it. Empty init_from: "".
std::string init_from_problem(const ModelConfig& m);

}  // namespace tokamak
