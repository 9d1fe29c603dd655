// The key registry: maps each dotted key to its field, type and comment, and implements --set and the
// JSON round-trip on top of it, so adding a field means adding one line here.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/config/config.h"
#include "engine/util/error.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

struct Key {
  const char* key;
  const char* help;
  std::function<json(const Config&)> get;
  std::function<void(Config&, const json&)> set;
};

#define TK_KEY(path, field, help) \
  Key { path, help, [](const Config& c) { return json(c.field); }, \
        [](Config& c, const json& v) { c.field = v.get<decltype(c.field)>(); } }

const std::vector<Key>& registry() {
  static const std::vector<Key> keys = {
      TK_KEY("data.path", data.path, "default | text file | folder of text files | .bin shards (file, folder, glob)"),
      TK_KEY("data.val_fraction", data.val_fraction, "tail of the tokens held out for validation"),
      TK_KEY("model.preset", model.preset, "nano | mini | gpt2 | gpt2-medium | gpt2-large | gpt2-xl"),
      TK_KEY("model.n_layer", model.n_layer, "transformer blocks"),
      TK_KEY("model.n_head", model.n_head, "attention heads (divides n_embd)"),
      TK_KEY("model.n_embd", model.n_embd, "width"),
      TK_KEY("model.context", model.context, "longest sequence the model can see"),
      TK_KEY("model.vocab_size", model.vocab_size, "tokenizer vocabulary (GPT-2: 50257)"),
      TK_KEY("model.vocab_pad_multiple", model.vocab_pad_multiple, "pad the vocabulary to a multiple of this (1 = off)"),
      TK_KEY("model.tie_weights", model.tie_weights, "lm_head shares the token embedding"),
      TK_KEY("model.dropout", model.dropout, "dropout probability"),
      TK_KEY("model.qkv_bias", model.qkv_bias, "biases on the linear layers"),
      TK_KEY("model.init_from", model.init_from, "Hugging Face GPT-2 weights to start from (folder or .safetensors)"),
      TK_KEY("train.batch_size", train.batch_size, "sequences per micro-batch (B)"),
      TK_KEY("train.context", train.context, "sequence length trained on (T); 0 = model.context"),
      TK_KEY("train.grad_accum", train.grad_accum, "micro-batches per optimizer step"),
      TK_KEY("train.batch_tokens", train.batch_tokens, "tokens per optimizer step; > 0 derives grad_accum"),
      TK_KEY("train.steps", train.steps, "optimizer steps"),
      TK_KEY("train.lr", train.lr, "peak learning rate"),
      TK_KEY("train.min_lr_ratio", train.min_lr_ratio, "cosine floor as a fraction of lr"),
      TK_KEY("train.warmup_steps", train.warmup_steps, "linear warm-up steps"),
      TK_KEY("train.weight_decay", train.weight_decay, "AdamW decay on 2-D weights"),
      TK_KEY("train.beta1", train.beta1, "AdamW beta1"),
      TK_KEY("train.beta2", train.beta2, "AdamW beta2"),
      TK_KEY("train.eps", train.eps, "AdamW epsilon"),
      TK_KEY("train.grad_clip", train.grad_clip, "global grad-norm clip; 0 = off"),
      TK_KEY("train.seed", train.seed, "seed for weights, data order and sampling"),
      TK_KEY("train.log_every", train.log_every, "steps between metric reports (host syncs)"),
      TK_KEY("train.eval_every", train.eval_every, "steps between validation losses; 0 = at the end"),
      TK_KEY("train.eval_batches", train.eval_batches, "validation batches per evaluation"),
      TK_KEY("train.sample_every", train.sample_every, "steps between samples; 0 = at the end, -1 = never"),
      TK_KEY("train.sample_tokens", train.sample_tokens, "tokens per sample"),
      TK_KEY("train.sample_prompt", train.sample_prompt, "text samples start from"),
      TK_KEY("train.sample_temperature", train.sample_temperature, "sampling temperature"),
      TK_KEY("train.sample_top_k", train.sample_top_k, "sample from the k most likely tokens; 0 = all"),
      TK_KEY("train.checkpoint_every", train.checkpoint_every, "steps between checkpoints; 0 = at the end"),
      TK_KEY("train.checkpoint_minutes", train.checkpoint_minutes, "minutes of wall time between checkpoints; 0 = off"),
      TK_KEY("train.checkpoint_keep", train.checkpoint_keep, "newest checkpoints kept; 0 = all"),
      TK_KEY("train.checkpoint_dir", train.checkpoint_dir, "where checkpoints go; \"\" = data dir/checkpoints/NAME"),
      TK_KEY("train.resume", train.resume, "checkpoint to continue from"),
      TK_KEY("opt.precision", opt.precision, "fp32 | tf32 | bf16 | bf16-pure | fp16"),
      TK_KEY("opt.attention", opt.attention, "buffered-mask | naive | sdpa"),
      TK_KEY("opt.layers", opt.layers, "scratch | native | fused"),
      TK_KEY("opt.fused_adamw", opt.fused_adamw, "one kernel for the whole optimizer step"),
      TK_KEY("opt.pin_memory", opt.pin_memory, "page-locked batches, non-blocking copies (CUDA)"),
      TK_KEY("opt.prefetch", opt.prefetch, "prepare the next batch on a background thread"),
      TK_KEY("opt.cuda_graphs", opt.cuda_graphs, "replay the step from a CUDA graph (CUDA)"),
      TK_KEY("opt.activation_checkpointing", opt.activation_checkpointing, "recompute blocks in backward"),
      TK_KEY("dist.gpus", dist.gpus, "data-parallel processes (GPUs; on CPU: Gloo processes)"),
      TK_KEY("dist.timeout_s", dist.timeout_s, "seconds before a dead or hung rank stops the others"),
      TK_KEY("dist.bucket_mb", dist.bucket_mb, "gradient all-reduce bucket size in MB"),
      TK_KEY("device", device, "cpu | cuda | cuda:N"),
      TK_KEY("threads", threads, "CPU threads; 0 = all cores"),
      TK_KEY("name", name, "run name; \"\" = derived"),
  };
  return keys;
}
#undef TK_KEY

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

const Key& find_key(const std::string& key) {
  const Key* nearest = nullptr;
  size_t best = SIZE_MAX;
  for (const Key& k : registry()) {
    if (key == k.key) return k;
    // Compare against the full key and its last part, so "lr" suggests "train.lr".
    std::string full = k.key;
    std::string leaf = full.substr(full.rfind('.') == std::string::npos ? 0 : full.rfind('.') + 1);
    size_t d = std::min(edit_distance(key, full), edit_distance(key, leaf));
    if (d < best) best = d, nearest = &k;
  }
  throw Error("unknown config key '" + key + "'",
              "did you mean '" + std::string(nearest->key) + "'? `tokamak config --defaults` lists every key");
}

std::string type_name(const json& v) {
  if (v.is_boolean()) return "bool";
  if (v.is_number_integer()) return "int";
  if (v.is_number()) return "float";
  return "string";
}

std::string to_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// Parses `text` as the type of the key's current value.
json parse_value(const std::string& key, const json& current, const std::string& text) {
  auto bad = [&](const char* what) {
    return Error("config key '" + key + "' expects " + what + ", got '" + text + "'",
                 "write e.g. --set " + key + "=" + to_text(current));
  };
  if (current.is_boolean()) {
    if (text == "true" || text == "1" || text == "on" || text == "yes") return true;
    if (text == "false" || text == "0" || text == "off" || text == "no") return false;
    throw bad("true or false");
  }
  if (current.is_number_integer()) {
    size_t used = 0;
    long long v = 0;
    try { v = std::stoll(text, &used); } catch (...) { throw bad("an integer"); }
    if (used != text.size()) throw bad("an integer");
    return v;
  }
  if (current.is_number()) {
    size_t used = 0;
    double v = 0;
    try { v = std::stod(text, &used); } catch (...) { throw bad("a number"); }
    if (used != text.size() || !std::isfinite(v)) throw bad("a finite number");
    return v;
  }
  return text;
}

void set_json(Config& c, const Key& k, const json& v) {
  json current = k.get(c);
  bool ok = (current.is_boolean() && v.is_boolean()) || (current.is_string() && v.is_string()) ||
            (current.is_number_integer() && v.is_number_integer()) ||
            (current.is_number_float() && v.is_number());
  if (!ok)
    throw Error("config key '" + std::string(k.key) + "' expects " + type_name(current) + ", got " + v.dump(),
                "write e.g. \"" + std::string(k.key) + "\": " + current.dump());
  k.set(c, v);
  if (std::string(k.key) == "model.preset") apply_model_preset(c.model, v.get<std::string>());
}

}  // namespace

std::vector<KeyDoc> config_keys(const Config& config) {
  std::vector<KeyDoc> docs;
  for (const Key& k : registry()) {
    json v = k.get(config);
    docs.push_back({k.key, type_name(v), to_text(v), k.help});
  }
  return docs;
}

void set_key(Config& config, const std::string& key, const std::string& value) {
  const Key& k = find_key(key);
  set_json(config, k, parse_value(key, k.get(config), value));
}

void apply_overrides(Config& config, const std::vector<std::string>& assignments) {
  std::vector<std::pair<std::string, std::string>> parsed;
  for (const std::string& a : assignments) {
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--set '" + a + "' is not key=value", "write e.g. --set train.steps=200");
    parsed.emplace_back(a.substr(0, eq), a.substr(eq + 1));
  }
  std::stable_partition(parsed.begin(), parsed.end(), [](const auto& kv) { return kv.first == "model.preset"; });
  for (const auto& [key, value] : parsed) set_key(config, key, value);
}

std::string config_to_json(const Config& config, int indent) {
  json root = json::object();
  for (const Key& k : registry()) {
    std::string key = k.key;
    size_t dot = key.find('.');
    if (dot == std::string::npos) root[key] = k.get(config);
    else root[key.substr(0, dot)][key.substr(dot + 1)] = k.get(config);
  }
  return root.dump(indent);
}

Config config_from_json(const std::string& text, const Config& base) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(std::string("config is not valid JSON: ") + e.what(), "check the file with a JSON linter");
  }
  if (!root.is_object()) throw Error("config JSON must be an object", "see `tokamak config --defaults`");
  std::vector<std::pair<std::string, json>> flat;
  for (auto& [section, value] : root.items()) {
    if (value.is_object()) {
      for (auto& [leaf, v] : value.items()) flat.emplace_back(section + "." + leaf, v);
    } else {
      flat.emplace_back(section, value);
    }
  }
  std::stable_partition(flat.begin(), flat.end(), [](const auto& kv) { return kv.first == "model.preset"; });
  Config c = base;
  for (const auto& [key, v] : flat) set_json(c, find_key(key), v);
  return c;
}

}  // namespace tokamak
