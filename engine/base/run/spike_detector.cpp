// See spike_detector.h.
#include "engine/base/run/spike_detector.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

double median_of(std::vector<double> v) {
  const size_t n = v.size(), h = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  const double upper = v[h];
  if (n % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h)));
}

}  // namespace

double spike_limit(const std::deque<double>& window, double threshold, double* median_out) {
  const std::vector<double> v(window.begin(), window.end());
  const double med = median_of(v);
  std::vector<double> dev(v.size());
  for (size_t i = 0; i < v.size(); ++i) dev[i] = std::abs(v[i] - med);
  // 1.4826 · MAD estimates the standard deviation of normal noise; the floor is for a window with none.
  const double sigma = std::max(1.4826 * median_of(dev), 0.01 * std::abs(med));
  if (median_out) *median_out = med;
  return med + threshold * sigma;
}

SpikeVerdict SpikeDetector::check(double loss, double grad_norm) const {
  SpikeVerdict v;
  if (!ready() || !std::isfinite(loss) || !std::isfinite(grad_norm)) return v;
  double med = 0;
  double limit = spike_limit(losses_, threshold_, &med);
  if (loss > limit) return {true, "loss", loss, med, limit};
  limit = spike_limit(norms_, norm_threshold_, &med);
  if (grad_norm > limit) return {true, "grad_norm", grad_norm, med, limit};
  return v;
}

void SpikeDetector::accept(double loss, double grad_norm) {
  if (!std::isfinite(loss) || !std::isfinite(grad_norm)) return;
  losses_.push_back(loss), norms_.push_back(grad_norm);
  while (static_cast<int64_t>(losses_.size()) > window_) losses_.pop_front(), norms_.pop_front();
}

std::string SpikeDetector::state_json() const {
  return nlohmann::json{{"loss", losses_}, {"grad_norm", norms_}}.dump();
}

void SpikeDetector::load_state_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("loss") || !j.contains("grad_norm"))
    throw Error("checkpoint: its spike detector's window is not readable JSON",
                "resume from another checkpoint, or with health.spike_action=off");
  losses_.clear(), norms_.clear();
  const auto& l = j["loss"];
  const auto& n = j["grad_norm"];
  for (size_t i = 0; i < l.size() && i < n.size(); ++i) accept(l[i].get<double>(), n[i].get<double>());
}

}  // namespace tokamak
