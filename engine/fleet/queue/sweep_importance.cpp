// Sweep importance (see sweep_importance.h).
#include "engine/fleet/queue/sweep_importance.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace tokamak {

std::vector<std::string> swept_keys(const std::string& spec_json) {
  // Ordered: the file's order is the grid's order and the order people wrote the keys in.
  const nlohmann::ordered_json spec = nlohmann::ordered_json::parse(spec_json, nullptr, false);
  std::vector<std::string> keys;
  if (spec.is_object() && spec.contains("sweep") && spec["sweep"].is_object())
    for (const auto& [key, v] : spec["sweep"].items()) keys.push_back(key);
  // One seed is a constant, not a swept key: no plot or correlation for it.
  if (spec.is_object() && spec.contains("seeds") && spec["seeds"].is_array() && spec["seeds"].size() > 1)
    keys.push_back("train.seed");
  return keys;
}

std::vector<KeyImportance> sweep_importance(const SweepStatus& s) {
  std::vector<KeyImportance> out;
  for (const std::string& key : swept_keys(s.spec_json)) {
    std::vector<double> x, y;
    for (const SweepTrialStatus& t : s.trials) {
      if (t.rungs.empty() || !std::isfinite(t.rungs.front().metric)) continue;
      const nlohmann::json config = nlohmann::json::parse(t.item.config_json, nullptr, false);
      const size_t dot = key.find('.');
      const nlohmann::json* v = nullptr;
      if (dot == std::string::npos && config.contains(key)) v = &config[key];
      else if (dot != std::string::npos && config.contains(key.substr(0, dot)) &&
               config[key.substr(0, dot)].contains(key.substr(dot + 1)))
        v = &config[key.substr(0, dot)][key.substr(dot + 1)];
      if (!v || !v->is_number()) {
        x.clear();
        break;  // a choice (optimizer.name): no order to correlate with; the studio compares its values' means
      }
      x.push_back(v->get<double>()), y.push_back(t.rungs.front().metric);
    }
    out.push_back({key, "spearman", spearman(x, y), static_cast<int64_t>(x.size())});
  }
  std::stable_sort(out.begin(), out.end(), [](const KeyImportance& a, const KeyImportance& b) {
    const double ra = std::isnan(a.rho) ? -1 : std::abs(a.rho), rb = std::isnan(b.rho) ? -1 : std::abs(b.rho);
    return ra > rb;
  });
  return out;
}

}  // namespace tokamak
