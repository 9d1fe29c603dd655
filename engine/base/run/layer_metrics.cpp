#include "engine/base/run/layer_metrics.h"

#include <cstdlib>
#include <tuple>

namespace tokamak {

const std::vector<LayerStat>& layer_stats() {
  static const std::vector<LayerStat> stats = {
      {"w_rms", "weight RMS", "Root mean square of the group's weights after the step", false},
      {"g_rms", "gradient RMS", "Root mean square of the group's gradients as the update used them (after clipping)",
       false},
      {"update_ratio", "update / weight",
       "‖Δw‖ / ‖w‖ of the step: how far the update moved the group's weights (about 1e-3 is the usual healthy range "
       "with AdamW)",
       false},
      {"act_rms", "activation RMS",
       "Root mean square of the residual stream after the block, on the step's first sequence", true},
      {"attn_entropy", "attention entropy",
       "Mean entropy (nats) of head 0's attention over the step's first sequence; it falls toward 0 when the head "
       "collapses onto one token",
       true},
  };
  return stats;
}

// "blocks.3.attn.c_attn.weight" -> "h3.attn"; see the header for the others.
std::string parameter_group(const std::string& name) {
  const auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("wte.") || starts("wpe.") || starts("value_embeds.")) return "emb";
  if (starts("ln_f.") || name == "lm_head") return "head";
  if (!starts("blocks.")) return "other";
  const size_t dot = name.find('.', 7);
  if (dot == std::string::npos) return "other";
  const std::string block = "h" + name.substr(7, dot - 7), part = name.substr(dot + 1);
  if (part.rfind("attn.", 0) == 0) return block + ".attn";
  if (part.rfind("ln_", 0) == 0) return block + ".norm";
  if (part.rfind("c_fc.", 0) == 0 || part.rfind("c_proj.", 0) == 0) return block + ".mlp";
  return block + ".other";
}

std::string layer_metric(const std::string& stat, const std::string& group) {
  return kLayerMetricPrefix + stat + "." + group;
}

bool is_layer_metric(const std::string& key) { return key.rfind(kLayerMetricPrefix, 0) == 0; }

std::optional<LayerKey> parse_layer_metric(const std::string& key) {
  if (!is_layer_metric(key)) return std::nullopt;
  const std::string rest = key.substr(std::string(kLayerMetricPrefix).size());
  const size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == rest.size()) return std::nullopt;
  return LayerKey{rest.substr(0, dot), rest.substr(dot + 1)};
}

// (section, block, part): emb is 0, blocks 1 in block order, head 2, anything else 3.
static std::tuple<int, long, std::string> group_rank(const std::string& g) {
  if (g == "emb") return {0, 0, ""};
  if (g == "head") return {2, 0, ""};
  if (g.size() > 1 && g[0] == 'h' && g[1] >= '0' && g[1] <= '9') {
    char* end = nullptr;
    const long block = std::strtol(g.c_str() + 1, &end, 10);
    return {1, block, end};  // ".attn" < ".mlp" < ".norm": the block's own order
  }
  return {3, 0, g};
}

bool group_before(const std::string& a, const std::string& b) { return group_rank(a) < group_rank(b); }

}  // namespace tokamak
