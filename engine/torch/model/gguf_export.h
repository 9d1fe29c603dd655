// A Tokamak GPT-2 as a GGUF file that llama.cpp loads as its "gpt2" architecture (and so Ollama and LM Studio):
// token_embd, position_embd, blk.N.{attn_norm, attn_qkv, attn_output, ffn_norm, ffn_up, ffn_down}, output_norm
// and, for an untied head, output; GPT-2's tokenizer (tokens and merges as GPT-2's files spell them) inside.
// Norms, biases and the position table stay f32 in every type, as llama.cpp's own converter keeps them.
#pragma once
#include <cstdint>
#include <string>

namespace tokamak {

class GPTImpl;
enum class GgmlType : uint32_t;

// "f32" | "f16" | "bf16" | "q8_0", or an Error naming the choices.
GgmlType parse_gguf_type(const std::string& name);

struct GgufNaming {
  std::string name;         // general.name: the run's name, or the checkpoint's folder
  std::string run_uid;      // tokamak.run_uid ("" when unknown)
  int64_t step = 0;         // tokamak.step
  std::string config_json;  // tokamak.config: the run's whole config
};

// Writes `path` (never seen half-written). A model llama.cpp's GPT-2 cannot run (RoPE, RMSNorm, ReLU², QK-norm,
// a logit soft-cap, U-net skips, value embeddings) or whose vocabulary is not GPT-2's is refused in one line
// naming what is in the way, before anything is written.
void export_gguf(const GPTImpl& model, const std::string& path, GgmlType type, const GgufNaming& naming);

}  // namespace tokamak
