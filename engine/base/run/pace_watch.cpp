// See pace_watch.h.
#include "engine/base/run/pace_watch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/base/run/events.h"
#include "engine/base/run/journal_events.h"

namespace tokamak {
namespace {

constexpr size_t kKept = 20;  // reports a median is taken over

double pace_median(const std::deque<double>& d) {
  std::vector<double> v(d.begin(), d.end());
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string pace_text(const char* f, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

// "2.6 s" below ten seconds, "95 s" above.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

// NVML's clock event reasons (nvml.h, nvmlClocksEventReason*): 0x1 GPU idle, 0x2 applications clocks setting, 0x10
// sync boost and 0x100 display clock setting say how the clocks were set; the others hold the GPU below them.
uint64_t gpu_slowdown_bits(uint64_t reasons) { return reasons & ~uint64_t{0x1 | 0x2 | 0x10 | 0x100}; }

std::string gpu_slowdown_names(uint64_t bits) {
  static const std::pair<uint64_t, const char*> names[] = {{0x4, "its software power cap"},
                                                           {0x8, "a hardware slowdown"},
                                                           {0x20, "software thermal slowdown"},
                                                           {0x40, "hardware thermal slowdown"},
                                                           {0x80, "the power brake"}};
  std::string out;
  uint64_t named = 0;
  for (const auto& [bit, name] : names)
    if (bits & bit) {
      out += (out.empty() ? "" : ", ") + std::string(name);
      named |= bit;
    }
  if (bits & ~named) {
    char rest[48];
    std::snprintf(rest, sizeof rest, "NVML reasons 0x%llx", static_cast<unsigned long long>(bits & ~named));
    out += (out.empty() ? "" : ", ") + std::string(rest);
  }
  return out;
}

std::string what_changed(const Metrics& before, const Metrics& now) {
  std::vector<std::string> said;
  const auto both = [&](const char* key, double* b, double* n) {
    *b = before.get(key), *n = now.get(key);
    return !std::isnan(*b) && !std::isnan(*n);
  };
  double b, n;
  if (both("others_cores", &b, &n) && n - b >= 0.5)
    said.push_back(pace_text("other processes use %.1f cores (%.1f before)", n, b));
  else if (both("load_1m", &b, &n) && n - b >= 1.0)
    said.push_back(pace_text("the load rose to %.1f (%.1f before)", n, b));
  if (both("cpu_mhz", &b, &n) && n < 0.9 * b) said.push_back(pace_text("the cores' clock fell to %.0f MHz (%.0f before)", n, b));
  if (both("cpu_temp_c", &b, &n) && n - b >= 10) said.push_back(pace_text("the CPU is at %.0f °C (%.0f before)", n, b));
  if (both("swap_used", &b, &n) && n - b >= 64e6)
    said.push_back(pace_text("swap in use grew to %.0f MB (%.0f before)", n / 1e6, b / 1e6));
  if (both("gpu_sm_mhz", &b, &n) && n < 0.9 * b) said.push_back(pace_text("the GPU's clock fell to %.0f MHz (%.0f before)", n, b));
  if (both("gpu_temp_c", &b, &n) && n - b >= 10) said.push_back(pace_text("the GPU is at %.0f °C (%.0f before)", n, b));
  if (both("gpu_throttle", &b, &n)) {
    const uint64_t now_bits = gpu_slowdown_bits(static_cast<uint64_t>(n));
    if (now_bits != 0 && gpu_slowdown_bits(static_cast<uint64_t>(b)) == 0)
      said.push_back("the GPU is held back (" + gpu_slowdown_names(now_bits) + ")");
  }
  std::string out;
  for (const std::string& s : said) out += (out.empty() ? "" : "; ") + s;
  return out;
}

std::optional<std::string> SlowdownWatch::report(const Metrics& m) {
  const double tok_s = m.get("tok_s");
  if (fraction_ <= 0 || std::isnan(tok_s)) return std::nullopt;
  // Three reports at least make "usual": the first ones include the warm-up.
  if (speeds_.size() >= 3 && tok_s < fraction_ * pace_median(speeds_)) {
    if (++slow_in_a_row_ < reports_ || said_) return std::nullopt;
    said_ = true;
    std::string message = pace_text("%.0f tok/s is %.0f%%", tok_s, 100 * tok_s / pace_median(speeds_)) +
                          pace_text(" of the run's median %.0f for %.0f reports: ", pace_median(speeds_),
                              static_cast<double>(slow_in_a_row_));
    const std::string changed = what_changed(usual_, m);
    message += changed.empty() ? "nothing this run measures changed (clocks, temperature, other processes, swap)"
                               : changed;
    return message;
  }
  slow_in_a_row_ = 0, said_ = false;
  speeds_.push_back(tok_s);
  if (speeds_.size() > kKept) speeds_.pop_front();
  usual_ = m;
  return std::nullopt;
}

void StallWatch::step(int64_t step, double wall_s, double now) {
  // A resumed run's clock starts again: that gap is not the run's pace.
  if (last_wall_ >= 0 && wall_s > last_wall_ && step > last_step_) {
    gaps_.push_back(wall_s - last_wall_);
    if (gaps_.size() > kKept) gaps_.pop_front();
  }
  last_wall_ = wall_s, last_ = now, last_step_ = step;
}

double StallWatch::limit() const {
  if (gaps_.empty()) return -1;
  return std::max(factor_ * pace_median(gaps_), min_s_);
}

std::optional<std::string> JournalStallWatch::line(const std::string& text, double now) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const std::string event = j.value("event", "");
  if (event == "start") {
    const auto c = j.find("config");
    if (c != j.end() && c->is_object() && c->contains("health") && (*c)["health"].is_object()) {
      const auto& h = (*c)["health"];
      watch_ = StallWatch(h.value("stall_factor", 10.0), h.value("stall_min_s", 60.0));
    }
    watch_.activity(now);
    return std::nullopt;
  }
  if (event != "step") {
    watch_.activity(now);  // an evaluation, a sample, a checkpoint: the run is alive
    return std::nullopt;
  }
  const int64_t step = j.value("step", int64_t{0});
  watch_.step(step, j.value("wall_s", 0.0), now);
  if (!stalled_) return std::nullopt;
  stalled_ = false;
  const std::string message =
      "step " + std::to_string(step) + " came after " + seconds_text(now - since_ + watch_.limit()) + " without one";
  return event_json(AlertEvent{"stall_over", step, message}).dump();
}

std::optional<std::string> JournalStallWatch::idle(double now, const std::function<bool()>& paused) {
  if (stalled_) return std::nullopt;
  const std::optional<double> silent = watch_.stalled(now);
  if (!silent) return std::nullopt;
  if (paused()) {
    watch_.activity(now);
    return std::nullopt;
  }
  stalled_ = true, since_ = now;
  const std::string message = "no step for " + seconds_text(*silent) + " after step " +
                              std::to_string(watch_.last_step()) + ": past the limit of " +
                              seconds_text(watch_.limit()) +
                              " (health.stall_factor × the usual time between reports, at least health.stall_min_s)";
  return event_json(AlertEvent{"stalled", watch_.last_step(), message}).dump();
}

std::optional<double> StallWatch::stalled(double now) const {
  const double l = limit();
  if (factor_ <= 0 || l < 0 || last_ < 0 || now - last_ <= l) return std::nullopt;
  return now - last_;
}

}  // namespace tokamak
