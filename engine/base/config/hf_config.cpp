// Hugging Face GPT-2 sizes without LibTorch (see hf_config.h).
#include "engine/base/config/hf_config.h"

#include <nlohmann/json.hpp>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/safetensors.h"

namespace tokamak {
namespace {

std::string folder_of(const std::string& path) {
  if (is_directory(path)) return path;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Sizes from the tensors' shapes: wte [vocab, C], wpe [context, C], one h.N group per layer.
ModelConfig shapes_config(const std::string& file, const ModelConfig& base) {
  const SafetensorsHeader h = read_safetensors_header(file);
  auto tensor = [&](const std::string& name) -> const SafetensorsTensor* {
    if (const SafetensorsTensor* t = h.find("transformer." + name)) return t;
    return h.find(name);
  };
  const SafetensorsTensor* wte = tensor("wte.weight");
  const SafetensorsTensor* wpe = tensor("wpe.weight");
  if (!wte || !wpe || wte->shape.size() != 2 || wpe->shape.size() != 2)
    throw Error("'" + file + "' has no GPT-2 embeddings (wte.weight, wpe.weight)",
                "the file does not hold GPT-2 weights");
  ModelConfig m = base;
  m.preset = "custom", m.vocab_size = wte->shape[0], m.n_embd = wte->shape[1], m.context = wpe->shape[0];
  m.n_layer = 0;
  while (tensor("h." + std::to_string(m.n_layer) + ".ln_1.weight")) ++m.n_layer;
  m.tie_weights = h.find("lm_head.weight") == nullptr;
  m.qkv_bias = true;
  return m;
}

}  // namespace

bool is_hf_weights(const std::string& path) {
  if (is_directory(path)) return path_exists(path + "/config.json") && path_exists(path + "/model.safetensors");
  try {
    return read_safetensors_header(path).metadata.count("format_version") == 0;  // Tokamak's checkpoints have it
  } catch (const Error&) {
    return false;
  }
}

std::string hf_weights_file(const std::string& path) {
  if (!is_directory(path)) return path;
  const std::string file = path + "/model.safetensors";
  if (!path_exists(file))
    throw Error("'" + path + "' has no model.safetensors",
                "pass a Hugging Face GPT-2 folder (config.json + model.safetensors) or the file itself");
  return file;
}

ModelConfig hf_model_config(const std::string& folder, const ModelConfig& base) {
  const std::string file = folder + "/config.json";
  nlohmann::json j = nlohmann::json::parse(read_file(file), nullptr, false);
  if (!j.is_object()) throw Error("'" + file + "' is not JSON", "pass a Hugging Face GPT-2 folder");
  if (j.value("model_type", "") != "gpt2")
    throw Error("'" + file + "' describes a " + j.value("model_type", std::string("model of no type")) + ", not GPT-2",
                "Tokamak reads GPT-2 weights only");
  ModelConfig m = base;
  auto need = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw Error("'" + file + "' has no " + key, "the folder's config.json is incomplete");
    return j[key].get<int64_t>();
  };
  m.preset = "custom", m.n_layer = need("n_layer"), m.n_head = need("n_head"), m.n_embd = need("n_embd");
  m.context = need("n_positions"), m.vocab_size = need("vocab_size");
  m.tie_weights = j.value("tie_word_embeddings", true);
  m.qkv_bias = true;
  if (j.contains("n_inner") && !j["n_inner"].is_null() && j["n_inner"] != 4 * m.n_embd)
    throw Error("'" + file + "' has n_inner " + j["n_inner"].dump() + "; Tokamak's MLP is 4 × n_embd", "");
  return m;
}

ModelConfig hf_weights_config(const std::string& path, const ModelConfig& base) {
  if (!path_exists(path))
    throw Error("'" + path + "' does not exist", "pass a Hugging Face GPT-2 folder or its model.safetensors");
  const std::string folder = folder_of(path);
  if (path_exists(folder + "/config.json")) return hf_model_config(folder, base);
  return shapes_config(hf_weights_file(path), base);
}

int64_t hf_weights_parameters(const std::string& path) {
  const SafetensorsHeader h = read_safetensors_header(hf_weights_file(path));
  auto ends_with = [](const std::string& s, const std::string& end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
  };
  int64_t n = 0;
  for (const SafetensorsTensor& t : h.tensors) {
    if (ends_with(t.name, ".attn.bias") || ends_with(t.name, ".attn.masked_bias")) continue;
    int64_t numel = 1;
    for (int64_t d : t.shape) numel *= d;
    n += numel;
  }
  return n;
}

std::string init_from_problem(const ModelConfig& m) {
  if (m.init_from.empty()) return "";
  ModelConfig w;
  try {
    if (!path_exists(m.init_from))
      throw Error("'" + m.init_from + "' does not exist", "pass a Hugging Face GPT-2 folder or its model.safetensors");
    if (!is_hf_weights(hf_weights_file(m.init_from)))
      return "model.init_from: '" + m.init_from +
             "' does not hold Hugging Face GPT-2 weights (a Tokamak checkpoint continues with checkpoint.resume=PATH)";
    w = hf_weights_config(m.init_from, m);
  } catch (const Error& e) {
    return "model.init_from: " + std::string(e.what());
  }
  std::string wrong, fix;
  auto check = [&](const char* key, int64_t ours, int64_t theirs) {
    if (ours == theirs) return;
    wrong += std::string(wrong.empty() ? "" : ", ") + key + " " + std::to_string(ours) +
             " (weights: " + std::to_string(theirs) + ")";
    fix += std::string(fix.empty() ? "" : " ") + "model." + key + "=" + std::to_string(theirs);
  };
  check("n_layer", m.n_layer, w.n_layer);
  check("n_head", m.n_head, w.n_head);
  check("n_embd", m.n_embd, w.n_embd);
  check("context", m.context, w.context);
  check("vocab_size", m.vocab_size, w.vocab_size);
  if (m.tie_weights != w.tie_weights) {
    wrong += std::string(wrong.empty() ? "" : ", ") + "tie_weights " + (m.tie_weights ? "true" : "false");
    fix += std::string(fix.empty() ? "" : " ") + "model.tie_weights=" + (w.tie_weights ? "true" : "false");
  }
  if (!m.qkv_bias) {
    wrong += std::string(wrong.empty() ? "" : ", ") + "qkv_bias false";
    fix += std::string(fix.empty() ? "" : " ") + "model.qkv_bias=true";
  }
  if (wrong.empty()) return "";
  return "model.init_from: the model does not have the weights' sizes: " + wrong + "; set " + fix;
}

}  // namespace tokamak
