// The sweep planner (see sweep.h): a sweep file → validated trials. Random points come from splitmix64 seeded
// with the sweep's seed (not <random>'s distributions, whose output differs between standard libraries), so a
// sweep file names the same trials on every machine.
#include "engine/fleet/queue/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/util/error.h"
#include "engine/base/util/utf8.h"

namespace tokamak {
namespace {

using ojson = nlohmann::ordered_json;

// One swept key: its values for a grid, or how to draw one for random search.
struct Axis {
  std::string key, label;
  bool integer = false;
  std::vector<ojson> values;  // a list, or a range's grid values
  bool range = false, log = false;
  double min = 0, max = 0;
};

// What a sweep may ask for: every trial is a validated config and a row in the store, planned before anything
// is queued, so a file that multiplies out to millions (or past int64) is refused instead of filling memory.
constexpr int64_t kMaxTrials = 10000;
constexpr int64_t kMaxSteps = 1000000000000;  // train.steps' own bound
constexpr int64_t kMaxEta = 1000;
// Trial names start with the sweep's name and a run folder keeps the first 100 bytes of a name: with at most
// 64, the "-pN" that tells trials apart always survives into the folder.
constexpr size_t kMaxNameBytes = 64;

[[noreturn]] void refuse(const std::string& source, const std::string& what, const std::string& hint) {
  std::string line = source + ": " + what;  // keys and values from the file may hold a line break
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  throw Error(line, hint);
}

// An integer field of `obj` (`fallback` when absent) inside [lo, hi]; `where` names it in the error.
int64_t int_field(const std::string& source, const ojson& obj, const std::string& key, const std::string& where,
                  int64_t fallback, int64_t lo, int64_t hi, const std::string& hint) {
  if (!obj.contains(key)) return fallback;
  const ojson& v = obj[key];
  const std::string range = "an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
  if (!v.is_number_integer()) refuse(source, where + " must be " + range + ", got " + v.dump(), hint);
  // JSON's 0 and other non-negative literals arrive as unsigned: both bounds are checked for both kinds.
  const bool out = v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi) ||
                                                (lo > 0 && v.get<uint64_t>() < static_cast<uint64_t>(lo))
                                          : v.get<int64_t>() > hi || v.get<int64_t>() < lo;
  if (out) refuse(source, where + " must be " + range + ", got " + v.dump(), hint);
  return v.get<int64_t>();
}

std::string text_field(const std::string& source, const ojson& obj, const std::string& key,
                       const std::string& fallback) {
  if (!obj.contains(key)) return fallback;
  if (!obj[key].is_string())
    refuse(source, "\"" + key + "\" must be a string, got " + obj[key].dump(), "see docs/SWEEPS.md for the fields");
  return obj[key].get<std::string>();
}

// nlohmann keeps the last of two equal keys without a word: {"optimizer.lr": [..], "optimizer.lr": [..]} would sweep
// half of what the file says. The parser's callback sees every key of every object, so a repeat is refused.
ojson parse_without_duplicates(const std::string& text, const std::string& source) {
  std::vector<std::vector<std::string>> open;  // the keys of each object being parsed, innermost last
  std::string repeated;
  const ojson::parser_callback_t check = [&](int, ojson::parse_event_t event, ojson& parsed) {
    if (event == ojson::parse_event_t::object_start) open.emplace_back();
    else if (event == ojson::parse_event_t::object_end && !open.empty()) open.pop_back();
    else if (event == ojson::parse_event_t::key && !open.empty() && repeated.empty()) {
      const std::string key = parsed.get<std::string>();
      for (const std::string& k : open.back())
        if (k == key) repeated = key;
      open.back().push_back(key);
    }
    return true;
  };
  ojson root;
  try {
    root = ojson::parse(text, check);
  } catch (const std::exception& e) {
    refuse(source, std::string("not valid JSON: ") + e.what(), "check the file with a JSON linter");
  }
  if (!repeated.empty())
    refuse(source, "\"" + repeated + "\" is given twice in one object", "keep one of them: JSON keeps only the last");
  return root;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
double uniform01(uint64_t& state) { return static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53; }

ojson number_value(const Axis& a, double v) {
  if (a.integer) return static_cast<int64_t>(std::llround(v));
  return v;
}

// {"a.b": v} as the config JSON {"a": {"b": v}}, which config_from_json checks key by key.
ojson nested(const std::string& key, const ojson& value) {
  const size_t dot = key.find('.');
  ojson j = ojson::object();
  if (dot == std::string::npos) j[key] = value;
  else j[key.substr(0, dot)][key.substr(dot + 1)] = value;
  return j;
}

std::string value_text(const ojson& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v.get<double>());
    return buf;
  }
  return v.dump();
}

// grid: a range needs its count (its values are spaced on it); random search draws from the range itself.
Axis read_axis(const std::string& source, const std::string& given, const ojson& spec, const Config& base, bool grid) {
  Axis a;
  const std::string key = current_key(given);  // a sweep file of an older release names some keys as it did
  a.key = key;
  // The key must exist: config_from_json names the nearest one when it does not.
  try {
    (void)config_from_json(nested(key, ojson(nullptr)).dump(), base);
  } catch (const Error& e) {
    if (e.message().rfind("unknown config key", 0) == 0) refuse(source, e.message(), e.hint());
  }
  if (key == "checkpoint.resume" || key == "name")
    refuse(source, key + " cannot be swept",
           "a sweep names its runs and resumes them itself; leave it out of \"sweep\"");
  for (const KeyDoc& d : config_keys(base))
    if (d.key == key) a.integer = d.type == "int";
  if (spec.is_array()) {
    if (spec.empty()) refuse(source, "\"" + key + "\" has no values", "give at least one value in the list");
    if (static_cast<int64_t>(spec.size()) > kMaxTrials)
      refuse(source,
             "\"" + key + "\" has " + std::to_string(spec.size()) + " values, more than a sweep's " +
                 std::to_string(kMaxTrials) + " trials",
             "give fewer values");
    for (const ojson& v : spec) a.values.push_back(v);
    return a;
  }
  if (!spec.is_object() || !spec.contains("min") || !spec.contains("max") || !spec["min"].is_number() ||
      !spec["max"].is_number())
    refuse(source, "\"" + key + "\" is neither a list of values nor a range",
           "write [v1, v2, ...] or {\"min\": 1e-4, \"max\": 1e-2, \"count\": 4, \"scale\": \"log\"}");
  a.range = true;
  a.min = spec["min"].get<double>(), a.max = spec["max"].get<double>();
  const std::string scale = text_field(source, spec, "scale", "linear");
  if (scale != "log" && scale != "linear")
    refuse(source, "\"" + key + "\" has scale \"" + scale + "\"", "write \"scale\": \"log\" or \"linear\"");
  a.log = scale == "log";
  if (!(a.min <= a.max)) refuse(source, "\"" + key + "\" has min above max", "swap them");
  // An integer key's values are rounded to int64: a bound past ±2^53 has no exact integer to round to.
  if (a.integer && (std::abs(a.min) > 0x1p53 || std::abs(a.max) > 0x1p53))
    refuse(source, "\"" + key + "\" is an integer key, but its range reaches past ±2^53",
           "give min and max between -9007199254740992 and 9007199254740992");
  if (a.log && a.min <= 0)
    refuse(source, "\"" + key + "\" is log-spaced from " + value_text(a.min), "log needs min > 0");
  if (!grid) return a;
  if (!spec.contains("count")) refuse(source, "\"" + key + "\" has no count", "add \"count\": N (values on the grid)");
  const int64_t count =
      int_field(source, spec, "count", "\"" + key + "\".count", 0, 1, kMaxTrials,
                "the values on the grid; a sweep has at most " + std::to_string(kMaxTrials) + " trials");
  for (int64_t i = 0; i < count; ++i) {
    const double t = count == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(count - 1);
    a.values.push_back(number_value(
        a, a.log ? std::exp(std::log(a.min) + t * (std::log(a.max) - std::log(a.min))) : a.min + t * (a.max - a.min)));
  }
  return a;
}

ojson draw(const Axis& a, uint64_t& state) {
  const double u = uniform01(state);
  if (!a.range) return a.values[std::min(a.values.size() - 1, static_cast<size_t>(u * a.values.size()))];
  return number_value(
      a, a.log ? std::exp(std::log(a.min) + u * (std::log(a.max) - std::log(a.min))) : a.min + u * (a.max - a.min));
}

}  // namespace

std::string swept_key_label(const std::string& key) {
  const size_t dot = key.rfind('.');
  if (dot == std::string::npos) return key;
  const std::string leaf = key.substr(dot + 1);
  return leaf == "name" ? key.substr(0, dot) : leaf;
}

namespace {

// Short labels for names: swept_key_label, or the whole key when two swept keys share it.
void label_axes(std::vector<Axis>& axes) {
  for (Axis& a : axes) {
    a.label = swept_key_label(a.key);
    for (const Axis& b : axes)
      if (&a != &b && swept_key_label(b.key) == a.label) a.label = a.key;
  }
}

void read_metric_and_asha(const std::string& source, const ojson& root, SweepPlan& plan) {
  plan.metric.name = text_field(source, root, "metric", "final_val_loss");
  if (plan.metric.name != "final_val_loss" && plan.metric.name != "best_val_loss" &&
      plan.metric.name != "time_to_target")
    refuse(source, "unknown metric \"" + plan.metric.name + "\"",
           "write \"metric\": \"final_val_loss\", \"best_val_loss\" or \"time_to_target\"");
  const std::string direction = text_field(source, root, "direction", "min");
  if (direction != "min" && direction != "max")
    refuse(source, "unknown direction \"" + direction + "\"", "write \"direction\": \"min\" or \"max\"");
  plan.metric.maximize = direction == "max";
  if (!root.contains("early_stopping")) return;
  const ojson& es = root["early_stopping"];
  if (!es.is_object() || (es.contains("method") && es["method"] != "asha"))
    refuse(source, "early_stopping must be {\"method\": \"asha\", \"min_steps\": R, \"eta\": 3}",
           "only ASHA is implemented; leave early_stopping out to train every trial to the end");
  plan.asha.min_steps =
      int_field(source, es, "min_steps", "early_stopping.min_steps", 0, 1, kMaxSteps, "the first rung's step");
  if (plan.asha.min_steps < 1) refuse(source, "early_stopping.min_steps must be 1 or more", "the first rung's step");
  plan.asha.eta =
      int_field(source, es, "eta", "early_stopping.eta", 3, 2, kMaxEta, "3 keeps the top third at each rung");
}

// What early stopping needs of every trial: a metric at each rung step, and rungs below its end.
void check_for_asha(const std::string& source, const SweepPlan& plan, const SweepTrial& t) {
  const TrainConfig& tc = t.config.train;
  const int64_t eval_every = t.config.eval.every;
  const std::string who = "trial " + std::to_string(t.point) + " (" + t.summary + ")";
  if (eval_every <= 0 || plan.asha.min_steps % eval_every != 0)
    refuse(source,
           who + ": early_stopping.min_steps=" + std::to_string(plan.asha.min_steps) +
               " is not a multiple of eval.every=" + std::to_string(eval_every),
           "set eval.every in \"base\" to a divisor of min_steps, so every rung step has a val loss");
  if (asha_rungs(plan.asha, tc.steps).empty())
    refuse(source,
           who + ": early_stopping.min_steps=" + std::to_string(plan.asha.min_steps) +
               " is not below train.steps=" + std::to_string(tc.steps),
           "lower min_steps or raise train.steps");
  if (plan.metric.name == "time_to_target" && t.config.eval.target_val_loss <= 0)
    refuse(source, who + ": metric time_to_target needs eval.target_val_loss", "set it in \"base\"");
}

Config read_base(const std::string& source, const ojson& root) {
  Config base;
  if (root.contains("base")) {
    try {
      base = config_from_json(root["base"].dump());
    } catch (const Error& e) {
      refuse(source, "base: " + e.message(), e.hint());
    }
  }
  return base;
}

// The swept keys in the file's order, then "seeds" as a last train.seed axis.
std::vector<Axis> read_axes(const std::string& source, const ojson& root, const Config& base, bool grid) {
  std::vector<Axis> axes;
  for (const auto& [key, spec] : root["sweep"].items()) {
    axes.push_back(read_axis(source, key, spec, base, grid));
    for (size_t k = 0; k + 1 < axes.size(); ++k)
      if (axes[k].key == axes.back().key)
        refuse(source, "\"" + axes.back().key + "\" is swept twice (once under an older name)", "keep one of them");
  }
  if (root.contains("seeds")) {
    if (std::any_of(axes.begin(), axes.end(), [](const Axis& a) { return a.key == "train.seed"; }))
      refuse(source, "train.seed is swept and \"seeds\" is given", "keep one of them");
    Axis seeds;
    seeds.key = "train.seed", seeds.integer = true;
    if (!root["seeds"].is_array() || root["seeds"].empty())
      refuse(source, "\"seeds\" must be a list of integers", "write \"seeds\": [1, 2, 3]");
    if (static_cast<int64_t>(root["seeds"].size()) > kMaxTrials)
      refuse(source,
             "\"seeds\" has " + std::to_string(root["seeds"].size()) + " seeds, more than a sweep's " +
                 std::to_string(kMaxTrials) + " trials",
             "give fewer seeds");
    for (const ojson& s : root["seeds"]) seeds.values.push_back(s);
    axes.push_back(seeds);
  }
  return axes;
}

void check_trial_count(const std::string& source, const ojson& root, const SweepPlan& plan,
                       const std::vector<Axis>& axes) {
  const int64_t seeds = root.contains("seeds") ? static_cast<int64_t>(axes.back().values.size()) : 1;
  int64_t trials = 1;  // multiplied out with a check at each factor: a product past int64 wraps
  const auto times = [&](int64_t n) { trials = n == 0 ? 0 : trials > kMaxTrials / n ? kMaxTrials + 1 : trials * n; };
  if (plan.method == "grid") {
    for (const Axis& a : axes) times(static_cast<int64_t>(a.values.size()));
  } else {
    times(int_field(source, root, "count", "\"count\"", 0, 0, kMaxTrials,
                    "how many points to draw; a sweep has at most " + std::to_string(kMaxTrials) + " trials"));
    times(seeds);
  }
  if (trials > kMaxTrials)
    refuse(source, "the sweep has more than " + std::to_string(kMaxTrials) + " trials, the most one may have",
           plan.method == "grid" ? "give fewer values, or draw some points with \"method\": \"random\" and a \"count\""
                                 : "lower \"count\" or give fewer \"seeds\"");
}

std::vector<std::vector<ojson>> grid_points(const std::vector<Axis>& axes) {
  std::vector<std::vector<ojson>> points;
  points.push_back({});
  for (const Axis& a : axes) {  // the first key outermost, as a person reads nested loops
    std::vector<std::vector<ojson>> next;
    for (const auto& p : points)
      for (const ojson& v : a.values) {
        next.push_back(p);
        next.back().push_back(v);
      }
    points.swap(next);
  }
  return points;
}

std::vector<std::vector<ojson>> random_points(const std::string& source, const ojson& root,
                                              const std::vector<Axis>& axes) {
  std::vector<std::vector<ojson>> points;
  const int64_t count = int_field(source, root, "count", "\"count\"", 0, 0, kMaxTrials, "");
  if (count < 1) refuse(source, "random search needs \"count\"", "add \"count\": N (how many points to draw)");
  if (root.contains("seed") && !root["seed"].is_number_integer())
    refuse(source, "\"seed\" must be an integer, got " + root["seed"].dump(), "write \"seed\": 0");
  uint64_t state = root.contains("seed") ? root["seed"].get<uint64_t>() : 0;
  for (int64_t i = 0; i < count; ++i) {
    points.push_back({});
    for (const Axis& a : axes)
      points.back().push_back(a.key == "train.seed" && root.contains("seeds")
                                  ? ojson(nullptr)  // filled below: every seed
                                  : draw(a, state));
  }
  if (root.contains("seeds")) {  // each drawn point runs once per seed
    std::vector<std::vector<ojson>> with_seeds;
    for (const auto& p : points)
      for (const ojson& s : axes.back().values) {
        with_seeds.push_back(p);
        with_seeds.back().back() = s;
      }
    points.swap(with_seeds);
  }
  return points;
}

SweepPlan plan_checked(const std::string& text, const std::string& source, int cuda_devices) {
  const ojson root = parse_without_duplicates(text, source);
  if (!root.is_object()) refuse(source, "a sweep file is a JSON object", "see docs/SWEEPS.md");
  for (const auto& [k, v] : root.items())
    if (k != "name" && k != "base" && k != "sweep" && k != "method" && k != "count" && k != "seed" && k != "seeds" &&
        k != "metric" && k != "direction" && k != "early_stopping")
      refuse(source, "unknown field \"" + k + "\"",
             "the fields are name, base, sweep, method, count, seed, seeds, metric, direction, early_stopping");
  SweepPlan plan;
  // Stored under today's names, as its trials' configs are: the swept keys are looked up in them.
  plan.spec_json = upgrade_sweep_text(root.dump(2));
  plan.name = text_field(source, root, "name", "sweep");
  if (const std::string bad = name_problem("\"name\"", plan.name); !bad.empty())
    refuse(source, bad, "write the name in UTF-8");
  if (plan.name.empty() || plan.name.size() > kMaxNameBytes)
    refuse(source,
           "\"name\" has " + std::to_string(plan.name.size()) + " bytes; a sweep's name has 1 to " +
               std::to_string(kMaxNameBytes),
           "shorten it: every trial's run is named after it");
  const Config base = read_base(source, root);
  if (!root.contains("sweep") || !root["sweep"].is_object() || root["sweep"].empty())
    refuse(source, "no \"sweep\" object", "add \"sweep\": {\"optimizer.lr\": [1e-3, 3e-3]}");
  plan.method = text_field(source, root, "method", "grid");
  if (plan.method != "grid" && plan.method != "random")
    refuse(source, "unknown method \"" + plan.method + "\"", "write \"method\": \"grid\" or \"random\"");
  std::vector<Axis> axes = read_axes(source, root, base, plan.method == "grid");
  label_axes(axes);
  for (const Axis& a : axes) plan.keys.push_back(a.key);
  read_metric_and_asha(source, root, plan);

  check_trial_count(source, root, plan, axes);
  const std::vector<std::vector<ojson>> points =
      plan.method == "grid" ? grid_points(axes) : random_points(source, root, axes);

  for (size_t i = 0; i < points.size(); ++i) {
    SweepTrial t;
    t.point = static_cast<int64_t>(i);
    t.name = plan.name + "-p" + std::to_string(i);
    ojson overrides = ojson::object();
    for (size_t k = 0; k < axes.size(); ++k) {
      const ojson& v = points[i][k];
      t.name += "-" + axes[k].label + "=" + value_text(v);
      t.summary += (t.summary.empty() ? "" : " ") + axes[k].key + "=" + value_text(v);
      overrides.update(nested(axes[k].key, v), true);
    }
    const std::string who = "trial " + std::to_string(i) + " (" + t.summary + ")";
    try {
      t.config = config_from_json(overrides.dump(), base);
    } catch (const Error& e) {
      refuse(source, who + ": " + e.message(), e.hint());
    }
    t.config.name = t.name;
    const std::vector<std::string> problems = config_problems(t.config, cuda_devices);
    if (!problems.empty())
      refuse(source, who + ": " + problems.front(), "change the swept values or \"base\" so that every trial is valid");
    if (plan.asha.min_steps > 0) check_for_asha(source, plan, t);
    plan.trials.push_back(std::move(t));
  }
  return plan;
}

}  // namespace

SweepPlan plan_sweep(const std::string& text, const std::string& source, int cuda_devices) {
  try {
    return plan_checked(text, source, cuda_devices);
  } catch (const nlohmann::json::exception& e) {  // a field of a type no check above foresaw: still one line
    refuse(source, std::string("a field has the wrong type: ") + e.what(), "see docs/SWEEPS.md for the fields");
  }
}

TrialResult trial_metric(const SweepMetric& metric, const std::string& journal, int64_t step) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  double last = nan, best = nan, target = nan;
  size_t at = 0;
  while (at < journal.size()) {
    size_t end = journal.find('\n', at);
    if (end == std::string::npos) break;  // a line being written is not read
    const nlohmann::json j = nlohmann::json::parse(journal.begin() + at, journal.begin() + end, nullptr, false);
    at = end + 1;
    if (!j.is_object() || j.value("event", "") != "eval" || !j.contains("val_loss")) continue;
    const int64_t s = j.value("step", int64_t{0});
    if (step > 0 && s > step) continue;
    const double v = j["val_loss"].is_number() ? j["val_loss"].get<double>() : nan;
    last = v;
    if (std::isnan(best) || v < best) best = v;
    if (!std::isfinite(target))
      target = j.contains("time_to_target_s") && j["time_to_target_s"].is_number() ? j["time_to_target_s"].get<double>()
                                                                                   : inf;
  }
  if (!std::isfinite(last)) return {nan, last};  // nothing evaluated, or diverged: the worst
  return {metric.name == "best_val_loss" ? best : metric.name == "time_to_target" ? target : last, last};
}

static std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    i = j + 1;
  }
  return rank;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (x.size() != y.size() || x.size() < 3) return nan;
  const std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
  const double n = static_cast<double>(x.size()), mean = (n + 1) / 2;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean), sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : nan;
}

}  // namespace tokamak
