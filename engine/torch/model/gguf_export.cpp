// Tokamak's GPT-2 in llama.cpp's names (see gguf_export.h). Tokamak's Linear weights are (out, in), which is
// ggml's {in, out} already: nothing is transposed, unlike a Hugging Face file whose Conv1D layers store (in, out).
#include "engine/torch/model/gguf_export.h"

#include <ATen/ATen.h>

#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/torch/model/gguf_file.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"
#include "engine/torch/model/hf_tokenizer.h"

namespace tokamak {
namespace {

// llama.cpp's name for one of Tokamak's parameters ("" for one GPT-2 has no place for).
std::string gguf_name(const std::string& ours) {
  if (ours == "wte.weight") return "token_embd.weight";
  if (ours == "wpe.weight") return "position_embd.weight";
  if (ours == "lm_head") return "output.weight";
  if (ours.rfind("ln_f.", 0) == 0) return "output_norm." + ours.substr(5);
  if (ours.rfind("blocks.", 0) != 0) return "";
  const size_t dot = ours.find('.', 7);
  const std::string blk = "blk." + ours.substr(7, dot - 7) + ".", rest = ours.substr(dot + 1);
  static const std::pair<const char*, const char*> parts[] = {
      {"ln_1.", "attn_norm."}, {"attn.c_attn.", "attn_qkv."}, {"attn.c_proj.", "attn_output."},
      {"ln_2.", "ffn_norm."},  {"c_fc.", "ffn_up."},          {"c_proj.", "ffn_down."}};
  for (const auto& [from, to] : parts) {
    const std::string f = from;
    if (rest.rfind(f, 0) == 0) return blk + to + rest.substr(f.size());
  }
  return "";
}

// GGUF's general.file_type for the export's type (llama_ftype).
uint32_t file_type(GgmlType t) {
  switch (t) {
    case GgmlType::kF32:
      return 0;
    case GgmlType::kF16:
      return 1;
    case GgmlType::kQ8_0:
      return 7;
    case GgmlType::kBF16:
      return 32;
  }
  return 0;
}

}  // namespace

GgmlType parse_gguf_type(const std::string& name) {
  if (name == "f32") return GgmlType::kF32;
  if (name == "f16") return GgmlType::kF16;
  if (name == "bf16") return GgmlType::kBF16;
  if (name == "q8_0") return GgmlType::kQ8_0;
  throw Error("GGUF type '" + name + "' is not known", "use --type f32, f16, bf16 or q8_0");
}

void export_gguf(const GPTImpl& model, const std::string& path, GgmlType type, const GgufNaming& naming) {
  const GPTOptions& o = model.options();
  const std::string switches = not_gpt2_switches(o);
  if (!switches.empty())
    throw Error("llama.cpp's GPT-2 cannot run this model (" + switches + ")",
                "export a model trained with those switches at their defaults, or use --format hf");
  if (o.vocab_size != Tokenizer::kEndOfText + 1)
    throw Error("this model's vocabulary has " + std::to_string(o.vocab_size) + " tokens, not GPT-2's " +
                    std::to_string(Tokenizer::kEndOfText + 1) + ", so no tokenizer can go into the file",
                "train with GPT-2's tokenizer (model.vocab_size=50257) to export it as GGUF");
  const int64_t C = o.block.n_embd;

  GgufWriter w;
  w.set("general.architecture", std::string("gpt2"));
  w.set("general.name", naming.name);
  w.set("general.file_type", file_type(type));
  w.set("general.quantization_version", uint32_t{2});
  w.set("gpt2.block_count", static_cast<uint32_t>(o.n_layer));
  w.set("gpt2.context_length", static_cast<uint32_t>(o.context));
  w.set("gpt2.embedding_length", static_cast<uint32_t>(C));
  w.set("gpt2.feed_forward_length", static_cast<uint32_t>(4 * C));
  w.set("gpt2.attention.head_count", static_cast<uint32_t>(o.block.n_head));
  w.set("gpt2.attention.layer_norm_epsilon", static_cast<float>(kLayerNormEps));
  const SpelledBpe bpe = spelled_bpe(Tokenizer::gpt2());
  std::vector<int32_t> token_type(bpe.tokens.size(), 1);  // normal, and <|endoftext|> a control token
  token_type.back() = 3;
  w.set("tokenizer.ggml.model", std::string("gpt2"));
  w.set("tokenizer.ggml.pre", std::string("gpt-2"));
  w.set("tokenizer.ggml.tokens", bpe.tokens);
  w.set("tokenizer.ggml.token_type", token_type);
  w.set("tokenizer.ggml.merges", bpe.merges);
  w.set("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(Tokenizer::kEndOfText));
  w.set("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(Tokenizer::kEndOfText));
  w.set("tokenizer.ggml.add_bos_token", false);  // GPT-2 was trained without one in front
  w.set("tokamak.run_uid", naming.run_uid);
  w.set("tokamak.step", static_cast<uint32_t>(naming.step));
  w.set("tokamak.config", naming.config_json);

  // Matrices take the export's type; vectors, norms and the position table stay f32 (as llama.cpp's converter
  // does); a matrix whose rows Q8_0 cannot block is kept f16.
  auto type_of = [&](const std::string& name, const at::Tensor& t) {
    if (t.dim() < 2 || name == "position_embd.weight") return GgmlType::kF32;
    return ggml_fits(type, t.size(-1)) ? type : GgmlType::kF16;
  };
  for (const auto& p : model.named_parameters()) {
    const std::string name = gguf_name(p.key());
    if (name.empty())
      throw Error("parameter " + p.key() + " has no place in llama.cpp's GPT-2", "export with --format hf");
    at::Tensor t = p.value().detach();
    if (p.key() == "wte.weight" || p.key() == "lm_head") t = t.narrow(0, 0, o.vocab_size);  // padding cut
    w.add_tensor(name, t, type_of(name, t));
  }
  if (!o.block.bias) {  // llama.cpp's GPT-2 needs every bias: zeros are the same model
    const std::pair<const char*, int64_t> biases[] = {
        {"attn_qkv.bias", 3 * C}, {"attn_output.bias", C}, {"ffn_up.bias", 4 * C}, {"ffn_down.bias", C}};
    for (int64_t i = 0; i < o.n_layer; ++i)
      for (const auto& [name, n] : biases)
        w.add_tensor("blk." + std::to_string(i) + "." + name, at::zeros({n}), GgmlType::kF32);
  }
  w.write(path);
}

}  // namespace tokamak
