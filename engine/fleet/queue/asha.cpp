// ASHA's rungs and promotions (see asha.h).
#include "engine/fleet/queue/asha.h"

#include <algorithm>
#include <cmath>

namespace tokamak {

std::vector<int64_t> asha_rungs(const AshaSpec& spec, int64_t steps) {
  std::vector<int64_t> rungs;
  if (spec.min_steps <= 0 || spec.eta < 2) return rungs;
  for (int64_t r = spec.min_steps; r < steps; r *= spec.eta) {
    rungs.push_back(r);
    // r * eta is formed only when it stays below steps: a product past int64 wrapped negative and looped on.
    if (r > (steps - 1) / spec.eta) break;
  }
  return rungs;
}

std::vector<int64_t> asha_promotions(const std::vector<RungResult>& rung, int64_t eta) {
  std::vector<RungResult> ranked = rung;
  // NaN sorts last: a diverged or failed trial is the worst whatever else holds.
  const auto before = [](double a, double b) {  // a strictly before b; NaN after everything
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
    return a < b;
  };
  std::sort(ranked.begin(), ranked.end(), [&](const RungResult& a, const RungResult& b) {
    if (before(a.metric, b.metric) || before(b.metric, a.metric)) return before(a.metric, b.metric);
    if (before(a.tie, b.tie) || before(b.tie, a.tie)) return before(a.tie, b.tie);
    return a.trial < b.trial;
  });
  const size_t top = eta > 0 ? ranked.size() / static_cast<size_t>(eta) : 0;
  std::vector<int64_t> promote;
  for (size_t i = 0; i < top; ++i)
    if (!ranked[i].promoted && !std::isnan(ranked[i].metric)) promote.push_back(ranked[i].trial);
  return promote;
}

}  // namespace tokamak
