// The old → new key table and the upgrade of old config objects (see renamed_keys.h).
#include "engine/base/config/renamed_keys.h"

#include <nlohmann/json.hpp>

#include "engine/base/util/error.h"

namespace tokamak {

const std::vector<RenamedKey>& renamed_keys() {
  static const std::vector<RenamedKey> keys = {
      {"opt.optimizer", "optimizer.name"},
      {"train.lr", "optimizer.lr"},
      {"opt.head_lr", "optimizer.head_lr"},
      {"opt.embed_lr", "optimizer.embed_lr"},
      {"train.muon_lr", "optimizer.muon_lr"},
      {"train.weight_decay", "optimizer.weight_decay"},
      {"train.beta1", "optimizer.beta1"},
      {"train.beta2", "optimizer.beta2"},
      {"train.eps", "optimizer.eps"},
      {"train.grad_clip", "optimizer.grad_clip"},
      {"train.muon_momentum", "optimizer.muon_momentum"},
      {"opt.muon_ns", "optimizer.muon_ns"},
      {"train.normuon_beta2", "optimizer.normuon_beta2"},
      {"opt.schedule", "schedule.name"},
      {"train.warmup_steps", "schedule.warmup_steps"},
      {"train.min_lr_ratio", "schedule.min_lr_ratio"},
      {"train.decay_fraction", "schedule.decay_fraction"},
      {"train.eval_every", "eval.every"},
      {"train.eval_batches", "eval.batches"},
      {"train.val_tokens", "eval.val_tokens"},
      {"train.eval_tasks", "eval.tasks"},
      {"train.target_val_loss", "eval.target_val_loss"},
      {"train.stop_at_target", "eval.stop_at_target"},
      {"train.sample_every", "sample.every"},
      {"train.sample_tokens", "sample.tokens"},
      {"train.sample_prompt", "sample.prompt"},
      {"train.sample_temperature", "sample.temperature"},
      {"train.sample_top_k", "sample.top_k"},
      {"train.checkpoint_every", "checkpoint.every"},
      {"train.checkpoint_minutes", "checkpoint.minutes"},
      {"train.checkpoint_keep", "checkpoint.keep"},
      {"train.checkpoint_dir", "checkpoint.dir"},
      {"train.resume", "checkpoint.resume"},
      {"opt.precision", "speed.precision"},
      {"opt.attention", "speed.attention"},
      {"opt.sdpa_backend", "speed.sdpa_backend"},
      {"opt.layers", "speed.layers"},
      {"opt.fused_adamw", "speed.fused_adamw"},
      {"opt.pin_memory", "speed.pin_memory"},
      {"opt.prefetch", "speed.prefetch"},
      {"opt.cuda_graphs", "speed.cuda_graphs"},
      {"opt.fused_glue", "speed.fused_glue"},
      {"opt.activation_checkpointing", "speed.activation_checkpointing"},
  };
  return keys;
}

std::string current_key(const std::string& key) {
  for (const RenamedKey& r : renamed_keys())
    if (key == r.old_key) return r.key;
  return key;
}

nlohmann::json upgrade_config_json(const nlohmann::json& config) {
  if (!config.is_object()) return config;
  nlohmann::json out = nlohmann::json::object();
  // Current keys first, so that an old key given beside its new name is caught whichever comes first.
  auto put = [&](const std::string& dotted, const nlohmann::json& value, const std::string& given_as) {
    const size_t dot = dotted.find('.');
    nlohmann::json* slot = nullptr;
    if (dot == std::string::npos) {
      slot = &out[dotted];
    } else {
      const std::string name = dotted.substr(0, dot);
      nlohmann::json& section = out[name];
      if (section.is_null()) section = nlohmann::json::object();
      if (!section.is_object())
        throw Error("config section '" + name + "' is not an object of keys",
                    "write \"" + name + "\": {\"" + dotted.substr(dot + 1) + "\": ...}");
      slot = &section[dotted.substr(dot + 1)];
    }
    if (!slot->is_null() && given_as == dotted)
      throw Error("config key '" + dotted + "' is given twice (in its section and as a dotted name)",
                  "keep only one of them");
    if (!slot->is_null())
      throw Error("config key '" + given_as + "' is the old name of '" + dotted + "', which is given too",
                  "keep only '" + dotted + "'");
    *slot = value;
  };
  std::vector<std::pair<std::string, const nlohmann::json*>> old;
  for (const auto& [name, value] : config.items()) {
    if (!value.is_object()) {
      // A flat file ({"optimizer.lr": 0.02}) goes into its section like a nested one, so that a key given under
      // both names is caught here too.
      if (current_key(name) != name) old.emplace_back(name, &value);
      else if (name.find('.') != std::string::npos) put(name, value, name);
      else out[name] = value;
      continue;
    }
    for (const auto& [leaf, v] : value.items()) {
      const std::string dotted = name + "." + leaf;
      if (current_key(dotted) != dotted) old.emplace_back(dotted, &v);
      else put(dotted, v, dotted);
    }
  }
  for (const auto& [name, value] : old) put(current_key(name), *value, name);
  return out;
}

std::string upgrade_config_text(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return text;
  nlohmann::json up = upgrade_config_json(j);
  return up == j ? text : up.dump();
}

std::string current_config_text(const std::string& text) {
  try {
    return upgrade_config_text(text);
  } catch (const Error&) {
    return text;
  }
}

std::string upgrade_sweep_text(const std::string& text) {
  using ojson = nlohmann::ordered_json;
  ojson spec = ojson::parse(text, nullptr, false);
  if (spec.is_discarded() || !spec.is_object()) return text;
  bool changed = false;
  if (spec.contains("base") && spec["base"].is_object()) {
    const nlohmann::json base = nlohmann::json::parse(spec["base"].dump());
    const nlohmann::json up = upgrade_config_json(base);
    if (up != base) spec["base"] = ojson::parse(up.dump()), changed = true;
  }
  if (spec.contains("sweep") && spec["sweep"].is_object()) {
    ojson axes = ojson::object();
    for (const auto& [key, values] : spec["sweep"].items()) {
      if (axes.contains(current_key(key))) return text;  // swept under both names: the planner names the clash
      changed = changed || current_key(key) != key;
      axes[current_key(key)] = values;
    }
    spec["sweep"] = axes;
  }
  return changed ? spec.dump() : text;
}

}  // namespace tokamak
