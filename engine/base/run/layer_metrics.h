// Per-layer statistics as named metrics: "layers.STAT.GROUP", e.g. "layers.g_rms.h3.attn". They travel as every
// other metric does (the journal, the store, the exports), so a run's layers are kept and exported with it; the
// terminal's step line and the plot pickers leave them out, and the studio's heatmap reads them back by these names.
// LibTorch-free: the store, the studio and the exports parse them (engine/torch/train/layer_stats.h makes them).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace tokamak {

inline constexpr const char* kLayerMetricPrefix = "layers.";

// One statistic: its key's STAT part and how a person reads it.
struct LayerStat {
  const char* id;     // "w_rms"
  const char* label;  // "weight RMS"
  const char* help;   // what it means, for the picker's tooltip and docs/INSIDE.md
  bool per_block;     // a block's (GROUP = "hN"), not a parameter group's
};
const std::vector<LayerStat>& layer_stats();

// The group a named parameter belongs to: "emb" (token, position and value embeddings), "hN.attn", "hN.mlp",
// "hN.norm" (block N's two norms), "head" (the final norm and an untied head), or "other".
std::string parameter_group(const std::string& parameter_name);

std::string layer_metric(const std::string& stat, const std::string& group);
bool is_layer_metric(const std::string& key);
struct LayerKey {
  std::string stat, group;
};
std::optional<LayerKey> parse_layer_metric(const std::string& key);

// Groups in the model's order: emb, h0.attn, h0.mlp, h0.norm (or h0), h1 …, head, other. Sorts a heatmap's rows.
bool group_before(const std::string& a, const std::string& b);

}  // namespace tokamak
