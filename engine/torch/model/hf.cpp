// Hugging Face GPT-2 export and import (see hf.h).
#include "engine/torch/model/hf.h"

#include <ATen/ATen.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/base/config/config.h"
#include "engine/base/config/hf_config.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/safetensors.h"
#include "engine/torch/model/gpt.h"

namespace tokamak {
namespace {

struct HfName {
  std::string name;         // without the "transformer." prefix that GPT2LMHeadModel adds
  bool transposed = false;  // GPT-2's Conv1D keeps (in, out)
};

// Tokamak's parameter name → GPT-2's.
HfName hf_name(const std::string& ours) {
  if (ours == "lm_head") return {"lm_head.weight"};
  if (ours.rfind("blocks.", 0) != 0) return {ours};  // wte.*, wpe.*, ln_f.*
  const size_t dot = ours.find('.', 7);
  const std::string layer = ours.substr(7, dot - 7), rest = ours.substr(dot + 1);
  std::string hf = rest;
  if (rest.rfind("c_fc.", 0) == 0 || rest.rfind("c_proj.", 0) == 0) hf = "mlp." + rest;
  const bool linear = hf.find("c_") != std::string::npos;
  const bool weight = hf.size() > 7 && hf.compare(hf.size() - 7, 7, ".weight") == 0;
  return {"h." + layer + "." + hf, linear && weight};
}

std::string full_name(const std::string& hf) { return hf == "lm_head.weight" ? hf : "transformer." + hf; }

std::string shape_text(c10::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

at::ScalarType float_type(const std::string& dtype, const std::string& name, const std::string& path) {
  if (dtype == "F32") return at::kFloat;
  if (dtype == "F16") return at::kHalf;
  if (dtype == "BF16") return at::kBFloat16;
  throw Error(name + " in '" + path + "' is " + dtype + ", not a float type", "the file does not hold GPT-2 weights");
}

}  // namespace

std::string not_gpt2_switches(const GPTOptions& o) {
  std::vector<std::string> s;
  if (o.block.norm != NormKind::kLayerNorm) s.push_back("model.norm=rmsnorm");
  if (o.block.mlp_act != MlpAct::kGelu) s.push_back("model.mlp_act=relu2");
  if (o.block.position != PositionKind::kLearned) s.push_back("model.position=rope");
  if (o.block.qk_norm) s.push_back("model.qk_norm=true");
  if (o.logit_softcap > 0) s.push_back("model.logit_softcap=" + std::to_string(o.logit_softcap).substr(0, 6));
  if (o.unet_skips) s.push_back("model.unet_skips=true");
  if (o.value_embeddings > 0) s.push_back("model.value_embeddings=" + std::to_string(o.value_embeddings));
  std::string names;
  for (const std::string& n : s) names += (names.empty() ? "" : ", ") + n;
  return names;
}

void export_hf(const GPTImpl& model, const std::string& dir) {
  const GPTOptions& o = model.options();
  const std::string switches = not_gpt2_switches(o);
  if (!switches.empty())
    throw Error("this model is not GPT-2 (" + switches + "), so it cannot be exported as a Hugging Face GPT-2",
                "export a model trained with those switches at their defaults");
  std::vector<std::pair<std::string, at::Tensor>> parts;
  for (const auto& p : model.named_parameters()) {
    at::Tensor t = p.value().detach().to(at::kCPU, at::kFloat);
    if (p.key() == "wte.weight" || p.key() == "lm_head") t = t.narrow(0, 0, o.vocab_size);  // padding cut
    const HfName hf = hf_name(p.key());
    parts.emplace_back(full_name(hf.name), (hf.transposed ? t.t() : t).contiguous());
  }
  if (!o.block.bias) {  // GPT-2's Conv1D layers always have a bias
    const int64_t C = o.block.n_embd;
    for (int64_t i = 0; i < o.n_layer; ++i) {
      const std::string h = "transformer.h." + std::to_string(i) + ".";
      parts.emplace_back(h + "attn.c_attn.bias", at::zeros({3 * C}));
      parts.emplace_back(h + "attn.c_proj.bias", at::zeros({C}));
      parts.emplace_back(h + "mlp.c_fc.bias", at::zeros({4 * C}));
      parts.emplace_back(h + "mlp.c_proj.bias", at::zeros({C}));
    }
  }
  std::vector<SafetensorsBlob> blobs;
  for (const auto& [name, t] : parts) blobs.push_back({name, "F32", t.sizes().vec(), t.data_ptr(), t.nbytes()});
  make_dirs(dir);
  write_safetensors(dir + "/model.safetensors", blobs, {{"format", "pt"}});
  nlohmann::json config = {{"architectures", nlohmann::json::array({"GPT2LMHeadModel"})},
                           {"model_type", "gpt2"},
                           {"vocab_size", o.vocab_size},
                           {"n_positions", o.context},
                           {"n_ctx", o.context},
                           {"n_embd", o.block.n_embd},
                           {"n_layer", o.n_layer},
                           {"n_head", o.block.n_head},
                           {"n_inner", nullptr},
                           {"activation_function", "gelu_new"},
                           {"layer_norm_epsilon", 1e-5},
                           {"tie_word_embeddings", o.tie_weights},
                           {"bos_token_id", 50256},
                           {"eos_token_id", 50256},
                           {"resid_pdrop", o.block.dropout},
                           {"embd_pdrop", o.block.dropout},
                           {"attn_pdrop", o.block.dropout},
                           {"initializer_range", 0.02},
                           {"scale_attn_weights", true},
                           {"torch_dtype", "float32"}};
  write_file_atomically(dir + "/config.json", config.dump(2) + "\n");
}

void load_hf_weights(GPTImpl& model, const std::string& path) {
  const std::string file = hf_weights_file(path);
  const SafetensorsHeader h = read_safetensors_header(file);
  std::map<std::string, const SafetensorsTensor*> by_name;
  for (const auto& t : h.tensors) {
    std::string n = t.name.rfind("transformer.", 0) == 0 ? t.name.substr(12) : t.name;
    by_name[n] = &t;
  }
  const GPTOptions& o = model.options();
  std::set<std::string> used;
  at::NoGradGuard no_grad;
  for (auto& p : model.named_parameters()) {
    const HfName hf = hf_name(p.key());
    auto it = by_name.find(hf.name);
    if (it == by_name.end())
      throw Error("'" + file + "' has no " + full_name(hf.name) + " (Tokamak's " + p.key() + ")",
                  "the weights are of another GPT-2 shape; set model sizes to match its config.json");
    const SafetensorsTensor& t = *it->second;
    used.insert(hf.name);
    at::Tensor cpu = at::empty(t.shape, at::TensorOptions().dtype(float_type(t.dtype, t.name, file)));
    read_safetensors_bytes(file, h, t, cpu.data_ptr());
    if (hf.transposed && cpu.dim() == 2) cpu = cpu.t();
    at::Tensor target = p.value();
    const bool vocab_rows = p.key() == "wte.weight" || p.key() == "lm_head";
    if (vocab_rows && cpu.dim() == 2 && cpu.size(0) <= target.size(0) && cpu.size(0) == o.vocab_size) {
      target.narrow(0, cpu.size(0), target.size(0) - cpu.size(0)).zero_();  // padded rows stay inert
      target = target.narrow(0, 0, cpu.size(0));
    }
    if (cpu.sizes() != target.sizes())
      throw Error(full_name(hf.name) + " in '" + file + "' has shape " +
                      shape_text(hf.transposed ? cpu.t().sizes() : cpu.sizes()) + " but the model needs " +
                      shape_text(hf.transposed ? target.t().sizes() : target.sizes()),
                  "set the model sizes to match the weights' config.json");
    target.copy_(cpu);
  }
  for (const auto& [name, t] : by_name) {
    if (used.count(name)) continue;
    // Attention-mask buffers that some GPT-2 files carry; a bias of an unbiased model must be zero.
    if (name.size() > 10 &&
        (name.compare(name.size() - 10, 10, ".attn.bias") == 0 || name.find("masked_bias") != std::string::npos))
      continue;
    if (name == "lm_head.weight" && o.tie_weights) continue;  // some files store the tied copy too
    const bool bias = !o.block.bias && name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (bias) {
      at::Tensor b = at::empty(t->shape, at::TensorOptions().dtype(float_type(t->dtype, t->name, file)));
      read_safetensors_bytes(file, h, *t, b.data_ptr());
      if (b.abs().max().item<double>() == 0) continue;
    }
    throw Error("'" + file + "' holds " + t->name + ", which the model does not have",
                bias ? "set model.qkv_bias=true" : "the weights are of another model shape");
  }
}

}  // namespace tokamak
