// The key registry: maps each dotted key to its field, type and comment, and implements --set and the
// JSON round-trip on top of it, so adding a field means adding one line here.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>

#include "engine/core/config/choices.h"
#include "engine/core/config/config.h"
#include "engine/core/util/error.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

struct Range {
  double min, max;
  bool min_open, max_open;  // "(0, 1]": the bound itself is not allowed
};
constexpr Range kNoRange{0, 0, false, false};

struct Key {
  const char* key;
  const char* help;  // nullptr: the key has a choice table (choices.h) or is model.preset, and lists its values
  std::function<json(const Config&)> get;
  std::function<void(Config&, const json&)> set;
  Range range = kNoRange;
  bool ranged = false;
};

// One line per key, long or not: the registry reads as a table.
// clang-format off
// TK_KEY for strings and bools; TK_NUM for numbers, with the valid range [lo, hi] (TK_NUM_OPEN: lo excluded,
// TK_NUM_BELOW: hi excluded). Upper bounds are far beyond any real run: they keep the arithmetic that sizes
// a run in range, and a typo from reaching the allocator.
#define TK_ACCESS(field) \
  [](const Config& c) { return json(c.field); }, [](Config& c, const json& v) { c.field = v.get<decltype(c.field)>(); }
#define TK_KEY(path, field, help) Key{path, help, TK_ACCESS(field)}
#define TK_CHOICE(path, field) Key{path, nullptr, TK_ACCESS(field)}
#define TK_NUM(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, false, false}, true}
#define TK_NUM_OPEN(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, true, false}, true}
#define TK_NUM_BELOW(path, field, lo, hi, help) Key{path, help, TK_ACCESS(field), Range{lo, hi, false, true}, true}
constexpr double kSteps = 1e12;     // steps, tokens: more than any run will take
constexpr double kSize = 1 << 20;   // widths, lengths, batch sizes

const std::vector<Key>& registry() {
  static const std::vector<Key> keys = {
      TK_KEY("data.path", data.path, "default | text file | folder of text files | .bin shards (file, folder, glob)"),
      TK_NUM_BELOW("data.val_fraction", data.val_fraction, 0, 1, "tail of the tokens held out for validation"),
      TK_KEY("data.jsonl_field", data.jsonl_field, "FILE.jsonl sources: the field of each line holding its document"),
      TK_KEY("data.val_path", data.val_path, "separate validation data (e.g. fineweb10B's val shard); \"\" = the data's own val shards or tail"),
      TK_CHOICE("model.preset", model.preset),
      TK_NUM("model.n_layer", model.n_layer, 1, 100000, "transformer blocks"),
      TK_NUM("model.n_head", model.n_head, 1, 65536, "attention heads (divides n_embd)"),
      TK_NUM("model.n_embd", model.n_embd, 1, kSize, "width"),
      TK_NUM("model.context", model.context, 2, kSize, "longest sequence the model can see"),
      TK_NUM("model.vocab_size", model.vocab_size, 2, 65536, "tokenizer vocabulary (GPT-2: 50257; shards hold uint16 ids)"),
      TK_NUM("model.vocab_pad_multiple", model.vocab_pad_multiple, 1, 65536, "pad the vocabulary to a multiple of this (1 = off)"),
      TK_KEY("model.tie_weights", model.tie_weights, "lm_head shares the token embedding"),
      TK_NUM_BELOW("model.dropout", model.dropout, 0, 1, "dropout probability"),
      TK_KEY("model.qkv_bias", model.qkv_bias, "biases on the linear layers"),
      TK_CHOICE("model.norm", model.norm),
      TK_CHOICE("model.mlp_act", model.mlp_act),
      TK_CHOICE("model.position", model.position),
      TK_KEY("model.qk_norm", model.qk_norm, "RMS-normalise queries and keys per head (speedrun, with ReLU² and zero-init projections: 22.3 → 15.2 min)"),
      TK_NUM("model.logit_softcap", model.logit_softcap, 0, 1e6, "cap · tanh(logits / cap); 0 = off (speedrun: 30, then 15: 3.57 → 3.4 min)"),
      TK_KEY("model.unet_skips", model.unet_skips, "U-net skips: learned weights add the first half's block outputs to the second half's inputs, mirrored (speedrun, with a doubled lr: 7.8 → 7.2 min). Not GPT-2: no Hugging Face export"),
      TK_NUM("model.value_embeddings", model.value_embeddings, 0, 1024, "k extra token-embedding tables mixed into the attention values of the first k and last k blocks (v ← λ0·v + λ1·table[token]); 0 = off (speedrun: value embeddings 4.66 → 4.41 min; this layout, 3 tables on the first and last 3 blocks, came in the 3.80 → 3.57 min record). Not GPT-2: no Hugging Face export"),
      TK_KEY("model.zero_init_proj", model.zero_init_proj, "attention/MLP output projections (and an untied head) start at zero (speedrun, with ReLU² and QK-norm: 22.3 → 15.2 min)"),
      TK_KEY("model.init_from", model.init_from, "Hugging Face GPT-2 weights to start from (folder or .safetensors)"),
      TK_NUM("train.batch_size", train.batch_size, 1, kSize, "sequences per micro-batch (B)"),
      TK_NUM("train.context", train.context, 0, kSize, "sequence length trained on (T); 0 = model.context"),
      TK_NUM("train.seq_warmup", train.seq_warmup, 0, kSteps, "steps over which the sequence length rises linearly from 16 tokens to train.context (multiples of 16); 0 = off (the speedrun warms up its attention window instead: 5.03 → 4.66 min)"),
      TK_NUM("train.batch_warmup", train.batch_warmup, 0, kSteps, "steps over which each micro-batch's sequences rise linearly from 1 to train.batch_size; 0 = off (speedrun's batch size schedule: 2.248 → 2.203 min)"),
      TK_NUM("train.grad_accum", train.grad_accum, 1, kSize, "micro-batches per optimizer step"),
      TK_NUM("train.batch_tokens", train.batch_tokens, 0, kSteps, "tokens per optimizer step; > 0 derives grad_accum"),
      TK_NUM("train.steps", train.steps, 1, kSteps, "optimizer steps"),
      TK_NUM_OPEN("train.lr", train.lr, 0, 10, "peak learning rate"),
      TK_NUM("train.min_lr_ratio", train.min_lr_ratio, 0, 1, "cosine floor as a fraction of lr"),
      TK_NUM("train.warmup_steps", train.warmup_steps, 0, kSteps, "linear warm-up steps"),
      TK_NUM("train.weight_decay", train.weight_decay, 0, 10, "AdamW decay on 2-D weights"),
      TK_NUM_BELOW("train.beta1", train.beta1, 0, 1, "AdamW beta1"),
      TK_NUM_BELOW("train.beta2", train.beta2, 0, 1, "AdamW beta2"),
      TK_NUM_OPEN("train.eps", train.eps, 0, 1, "AdamW epsilon"),
      TK_NUM("train.grad_clip", train.grad_clip, 0, 1e6, "global grad-norm clip; 0 = off"),
      TK_NUM("train.max_skipped_steps", train.max_skipped_steps, 0, kSteps,
             "non-finite steps in a row skipped before the run fails; 0 = fail at the first"),
      TK_NUM("train.seed", train.seed, -9e18, 9e18, "seed for weights, data order and sampling"),
      TK_NUM("train.log_every", train.log_every, 1, kSteps, "steps between metric reports (host syncs)"),
      TK_KEY("train.profile", train.profile, "time the phases of report steps (data, forward, backward, ...)"),
      TK_NUM("train.eval_every", train.eval_every, 0, kSteps, "steps between validation losses; 0 = at the end"),
      TK_NUM("train.eval_batches", train.eval_batches, 1, kSize, "validation batches per evaluation"),
      TK_NUM("train.val_tokens", train.val_tokens, 0, kSteps, "> 0: evaluate on exactly the first N validation tokens (speedrun: 10485760) instead of eval_batches"),
      TK_KEY("train.eval_tasks", train.eval_tasks, "hellaswag:PATH, ppl:PATH (comma-separated), every eval_every steps"),
      TK_NUM("train.sample_every", train.sample_every, -1, kSteps, "steps between samples; 0 = at the end, -1 = never"),
      TK_NUM("train.sample_tokens", train.sample_tokens, 1, kSize, "tokens per sample"),
      TK_KEY("train.sample_prompt", train.sample_prompt, "text samples start from"),
      TK_NUM_OPEN("train.sample_temperature", train.sample_temperature, 0, 100, "sampling temperature"),
      TK_NUM("train.sample_top_k", train.sample_top_k, 0, 65536, "sample from the k most likely tokens; 0 = all"),
      TK_NUM("train.checkpoint_every", train.checkpoint_every, 0, kSteps, "steps between checkpoints; 0 = at the end"),
      TK_NUM("train.checkpoint_minutes", train.checkpoint_minutes, 0, 525600, "minutes of wall time between checkpoints; 0 = off"),
      TK_NUM("train.checkpoint_keep", train.checkpoint_keep, 0, 1000000, "newest checkpoints kept; 0 = all"),
      TK_KEY("train.checkpoint_dir", train.checkpoint_dir, "where checkpoints go; \"\" = data dir/checkpoints/NAME"),
      TK_KEY("train.resume", train.resume, "checkpoint to continue from"),
      TK_NUM("train.target_val_loss", train.target_val_loss, 0, 1e6,
             "record wall time, tokens and steps when val loss first reaches this (checked every eval_every steps: that is the resolution); 0 = off"),
      TK_KEY("train.stop_at_target", train.stop_at_target, "end the run at the evaluation that reaches train.target_val_loss"),
      TK_NUM_OPEN("train.decay_fraction", train.decay_fraction, 0, 1, "opt.schedule=wsd: last fraction of steps decaying linearly"),
      TK_NUM_OPEN("train.muon_lr", train.muon_lr, 0, 10, "opt.optimizer=muon: peak lr of the hidden matrices"),
      TK_NUM_BELOW("train.muon_momentum", train.muon_momentum, 0, 1, "opt.optimizer=muon or normuon: Nesterov momentum"),
      TK_NUM_BELOW("train.normuon_beta2", train.normuon_beta2, 0, 1, "opt.optimizer=normuon: decay of each neuron's mean squared update"),
      TK_CHOICE("opt.precision", opt.precision),
      TK_CHOICE("opt.attention", opt.attention),
      TK_CHOICE("opt.sdpa_backend", opt.sdpa_backend),
      TK_CHOICE("opt.layers", opt.layers),
      TK_KEY("opt.fused_adamw", opt.fused_adamw, "one kernel for the whole optimizer step"),
      TK_CHOICE("opt.pin_memory", opt.pin_memory),
      TK_KEY("opt.prefetch", opt.prefetch, "prepare the next batch on a background thread"),
      TK_KEY("opt.fused_glue", opt.fused_glue,
             "true | false: with opt.layers=fused in bf16 on CUDA, bf16 activations between Tokamak's kernels with "
             "no casts, and the GELU backward out of place"),
      TK_KEY("opt.cuda_graphs", opt.cuda_graphs, "true | false: capture the training step once as a CUDA graph and replay it (CUDA)"),
      TK_KEY("opt.activation_checkpointing", opt.activation_checkpointing, "recompute blocks in backward"),
      TK_CHOICE("opt.optimizer", opt.optimizer),
      TK_CHOICE("opt.muon_ns", opt.muon_ns),
      TK_NUM("opt.head_lr", opt.head_lr, 0, 100, "peak lr of an untied head (model.tie_weights=false), on train.lr's schedule; 0 = train.lr (speedrun, untied head at its own lr with zero-init: 12.0 → 10.8 min; the CPU speedrun ladder: 4× train.lr, 6.0 in 47 steps against 57 tied)"),
      TK_NUM("opt.embed_lr", opt.embed_lr, 0, 100, "peak lr of the token, learned position and value embeddings, on train.lr's schedule; 0 = train.lr (the speedrun gives them the largest lr of all)"),
      TK_CHOICE("opt.schedule", opt.schedule),
      TK_NUM("dist.gpus", dist.gpus, 1, 4096, "data-parallel processes (GPUs; on CPU: Gloo processes)"),
      TK_NUM("dist.timeout_s", dist.timeout_s, 1, 604800, "seconds before a dead or hung rank stops the others"),
      TK_NUM_OPEN("dist.bucket_mb", dist.bucket_mb, 0, 65536, "gradient all-reduce bucket size in MB"),
      TK_NUM("dist.zero", dist.zero, 0, 1, "ZeRO stage: 0 = every rank holds AdamW's state; 1 = shard it over the ranks"),
      TK_CHOICE("device", device),
      TK_NUM("threads", threads, 0, 4096, "CPU threads; 0 = all cores"),
      TK_KEY("memory_check", memory_check, "refuse a run whose memory estimate exceeds the device's memory"),
      TK_KEY("name", name, "run name; \"\" = derived"),
  };
  // clang-format on
  return keys;
}
#undef TK_KEY
#undef TK_CHOICE
#undef TK_NUM
#undef TK_NUM_OPEN
#undef TK_NUM_BELOW
#undef TK_ACCESS

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

std::string help_of_choice(const std::string& key) {
  if (key != "model.preset") return choice_list(key);
  std::string names;
  for (const std::string& n : model_presets()) names += (names.empty() ? "" : " | ") + n;
  return names;
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
    try {
      v = std::stoll(text, &used);
    } catch (...) {
      throw bad("an integer");
    }
    if (used != text.size()) throw bad("an integer");
    return v;
  }
  if (current.is_number()) {
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (...) {
      throw bad("a number");
    }
    if (used != text.size() || !std::isfinite(v)) throw bad("a finite number");
    return v;
  }
  return text;
}

void set_json(Config& c, const Key& k, const json& given) {
  json current = k.get(c);
  // A switch that became a choice (opt.pin_memory: true/false → auto/true/false) still reads old configs.
  bool was_switch = false;
  for (const ChoiceInfo& row : choices_of(k.key)) was_switch = was_switch || row.value == "true";
  const json v = given.is_boolean() && current.is_string() && was_switch ? json(given ? "true" : "false") : given;
  if (v.is_string()) {  // the config is written back as JSON (runs store, checkpoints), which must be UTF-8
    try {
      (void)v.dump();
    } catch (const json::type_error&) {
      throw Error("config key '" + std::string(k.key) + "' has a value that is not valid UTF-8",
                  "write it as UTF-8 text");
    }
  }
  bool ok = (current.is_boolean() && v.is_boolean()) || (current.is_string() && v.is_string()) ||
            (current.is_number_integer() && v.is_number_integer()) || (current.is_number_float() && v.is_number());
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
    KeyDoc doc{k.key, type_name(v), to_text(v), k.help ? k.help : help_of_choice(k.key)};
    doc.ranged = k.ranged, doc.min_open = k.range.min_open, doc.max_open = k.range.max_open;
    doc.min = k.range.min, doc.max = k.range.max;
    if (v.is_number()) doc.number = v.get<double>();
    docs.push_back(doc);
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
  } catch (const json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number no double holds (1e999).
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
