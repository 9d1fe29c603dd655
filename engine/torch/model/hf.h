// GPT-2 weights in Hugging Face's layout, out and in. Checkpoints keep Tokamak's own parameter names (they
// name the modules and the optimizer state one to one); this file is the one place that knows GPT-2's names:
// "transformer.h.3.mlp.c_fc.weight" for "blocks.3.c_fc.weight", with the weights of GPT-2's Conv1D layers
// (c_attn, c_proj, c_fc) stored transposed, the vocabulary cut back from padded_vocab to vocab_size, and
// GPT-2's always-present biases written as zeros for a model without biases.
#pragma once
#include <string>

#include "engine/base/config/hf_config.h"  // is_hf_weights, hf_model_config

namespace tokamak {

class GPTImpl;
struct GPTOptions;

// The switches that make a model something GPT-2's layout cannot hold, as the config spells them
// ("model.position=rope, model.qk_norm=true"); "" for a GPT-2. Hugging Face's GPT-2 and llama.cpp's both refuse
// these.
std::string not_gpt2_switches(const GPTOptions& options);

// Writes DIR/config.json (GPT2LMHeadModel) and DIR/model.safetensors (fp32), durably.
void export_hf(const GPTImpl& model, const std::string& dir);

// Copies GPT-2 weights (a folder or a model.safetensors file; names with or without "transformer.") into a
// model whose sizes match. Missing, extra or mis-shaped tensors are named in a one-line Error.
void load_hf_weights(GPTImpl& model, const std::string& path);

}  // namespace tokamak
