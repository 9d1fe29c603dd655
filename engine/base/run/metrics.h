// Metrics as named scalars: what a run measures at a step is a list of {key, value} pairs, produced in one
// place (the trainer's report block) and passed on unchanged by every sink — the CLI printer and --json, the
// run store (one row per {run, step, key}), exports, `runs compare` and the studio's plot pickers. A new
// metric is one add() where it is measured; nothing downstream names it. (torchtitan's metrics component is
// the model.) Header-only and free of LibTorch, so the store (tokamak_base) reads the same type.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace tokamak {

struct MetricValue {
  std::string key;  // snake_case, stable: it is the name in the store, the exports and --json
  double value = 0;
  bool integer = false;  // a count or bytes: stored and exported as an integer
};

class Metrics {
 public:
  // Adds (or replaces) a value. A value that is not finite (NaN, inf) is dropped: "not measured at this
  // step" — a skipped step has no loss to plot, and JSON has no inf.
  void add(const std::string& key, double value) { put(key, value, false); }
  void add_count(const std::string& key, int64_t value) { put(key, static_cast<double>(value), true); }
  void add(const MetricValue& v) { put(v.key, v.value, v.integer); }

  // NaN when the key was not reported.
  double get(const std::string& key) const {
    for (const MetricValue& v : values_)
      if (v.key == key) return v.value;
    return std::numeric_limits<double>::quiet_NaN();
  }
  bool has(const std::string& key) const { return !std::isnan(get(key)); }
  const std::vector<MetricValue>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  auto begin() const { return values_.begin(); }
  auto end() const { return values_.end(); }

 private:
  void put(const std::string& key, double value, bool integer) {
    if (!std::isfinite(value)) return;
    for (MetricValue& v : values_)
      if (v.key == key) {
        v.value = value, v.integer = integer;
        return;
      }
    values_.push_back({key, value, integer});
  }
  std::vector<MetricValue> values_;  // in the order they were added: printers and exports keep it
};

}  // namespace tokamak
