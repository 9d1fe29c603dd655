// Scoreboard arithmetic and its text and Markdown tables.
#include "engine/base/store/scoreboard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/format.h"

namespace tokamak {

double steady_value(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values)
    if (!std::isnan(x)) v.push_back(x);
  if (v.empty()) return kNaN;
  size_t skip = v.size() >= 2 ? std::max<size_t>(1, (v.size() + 9) / 10) : 0;
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(skip));
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean_after_first(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values)
    if (!std::isnan(x)) v.push_back(x);
  if (v.size() >= 2) v.erase(v.begin());
  if (v.empty()) return kNaN;
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

int metric_better(const std::string& key) {
  const auto ends_with = [&](const std::string& tail) {
    return key.size() >= tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (key.find("loss") != std::string::npos || ends_with("_ms") || key.rfind("mem_", 0) == 0 ||
      key == "skipped_steps" || ends_with("_to_target"))
    return -1;
  if (key == "tok_s" || key == "mfu") return 1;
  return 0;
}

// "mean:K" → K (0 when the stat is not of that form or K is not a whole number ≥ 1).
static int64_t mean_window(const std::string& stat) {
  if (stat.rfind("mean:", 0) != 0 || stat.size() == 5) return 0;
  int64_t k = 0;
  for (size_t i = 5; i < stat.size(); ++i) {
    if (stat[i] < '0' || stat[i] > '9' || k > 1000000000) return 0;
    k = k * 10 + (stat[i] - '0');
  }
  return k;
}

void check_metric_stat(const std::string& stat) {
  if (stat == "last" || stat == "min" || stat == "max" || stat == "best" || mean_window(stat) > 0) return;
  throw Error("'" + stat + "' is not a metric summary", "use last, min, max, best or mean:K (K ≥ 1), e.g. mean:10");
}

std::string metric_stat_label(const std::string& stat) {
  const int64_t k = mean_window(stat);
  return k > 0 ? "mean of last " + std::to_string(k) : stat;
}

double summarize_metric(const std::string& key, const std::vector<double>& values, const std::string& stat) {
  check_metric_stat(stat);
  std::vector<double> v;
  for (double x : values)
    if (!std::isnan(x)) v.push_back(x);
  if (v.empty()) return kNaN;
  if (stat == "last") return v.back();
  const int better = metric_better(key);
  if (stat == "best" && better == 0) return kNaN;
  if (stat == "min" || (stat == "best" && better < 0)) return *std::min_element(v.begin(), v.end());
  if (stat == "max" || stat == "best") return *std::max_element(v.begin(), v.end());
  const size_t k = std::min(v.size(), static_cast<size_t>(mean_window(stat)));
  double sum = 0;
  for (size_t i = v.size() - k; i < v.size(); ++i) sum += v[i];
  return sum / static_cast<double>(k);
}

bool has_target(const Scoreboard& b) {
  for (const ScoreRow& r : b.rows)
    if (r.target > 0) return true;
  return false;
}

bool has_phases(const Scoreboard& b) {
  for (const ScoreRow& r : b.rows)
    for (double ms : r.phase_ms)
      if (!std::isnan(ms)) return true;
  return false;
}

static void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

std::map<std::string, std::string> flatten_config(const std::string& config_json) {
  std::map<std::string, std::string> out;
  nlohmann::json j = nlohmann::json::parse(config_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return out;
  flatten(j, "", out);
  // A run stored by an older release names some keys as it did (renamed_keys.h): read them under today's names,
  // so that an old run and a new one with the same setting never differ.
  std::map<std::string, std::string> current;
  for (auto& [key, value] : out) current[current_key(key)] = std::move(value);
  return current;
}

Scoreboard build_scoreboard(const std::vector<ScoreInput>& runs, size_t baseline) {
  Scoreboard b;
  b.baseline = baseline < runs.size() ? baseline : 0;
  for (const ScoreInput& in : runs) {
    ScoreRow r;
    r.label = in.label;
    r.setup = in.setup;
    r.tok_s = steady_value(in.tok_s);
    r.mfu = steady_value(in.mfu);
    r.peak_mem = in.peak_mem > 0 ? in.peak_mem : kNaN;  // 0 is what CPU runs report: unknown
    r.final_val_loss = in.final_val_loss;
    r.best_val_loss = in.best_val_loss;
    r.step_ms = mean_after_first(in.step_ms);
    r.target = in.target > 0 ? in.target : kNaN;
    r.time_to_target_s = in.time_to_target_s;
    r.tokens_to_target = in.tokens_to_target;
    r.steps_to_target = in.steps_to_target;
    for (int p = 0; p < kPhaseCount; ++p) r.phase_ms[p] = mean_after_first(in.phase_ms[p]);
    b.rows.push_back(r);
  }
  if (!b.rows.empty()) {
    double base = b.rows[b.baseline].tok_s;
    for (ScoreRow& r : b.rows) r.speedup = base > 0 ? r.tok_s / base : kNaN;
    const double base_time = b.rows[b.baseline].time_to_target_s;
    for (ScoreRow& r : b.rows) r.target_speedup = base_time > 0 ? base_time / r.time_to_target_s : kNaN;
  }
  std::vector<std::map<std::string, std::string>> flat;
  std::map<std::string, int> keys;
  for (const ScoreInput& in : runs) {
    flat.push_back(flatten_config(in.config_json));
    for (const auto& kv : flat.back()) keys[kv.first]++;
  }
  for (const auto& k : keys) {
    std::vector<std::string> values;
    for (const auto& f : flat) {
      auto it = f.find(k.first);
      values.push_back(it == f.end() ? "-" : it->second);
    }
    bool differ = std::any_of(values.begin(), values.end(), [&](const std::string& v) { return v != values[0]; });
    if (differ) {
      b.diff_keys.push_back(k.first);
      b.diff_values.push_back(values);
    }
  }
  return b;
}

ScoreInput score_input(RunStore& store, int64_t run_id) {
  RunInfo run = store.run(run_id);
  ScoreInput in;
  in.label = "#" + std::to_string(run.id) + (run.name.empty() ? "" : " " + run.name);
  in.setup = run.model + " " + run.device + (run.world_size > 1 ? " ×" + std::to_string(run.world_size) : "");
  in.config_json = run.config_json;
  for (const MetricRow& r : store.metrics(run_id)) {
    if (!std::isnan(r["tok_s"])) in.tok_s.push_back(r["tok_s"]);
    if (!std::isnan(r["mfu"])) in.mfu.push_back(r["mfu"]);
    if (!std::isnan(r["step_ms"])) in.step_ms.push_back(r["step_ms"]);
    for (int p = 0; p < kPhaseCount; ++p) {
      const double ms = r[phase_names()[p].metric];
      if (!std::isnan(ms)) in.phase_ms[p].push_back(ms);
    }
  }
  for (const MetricSummary& s : store.summary(run_id)) {
    if (s.metric == "mem_peak") in.peak_mem = s.max;
    if (s.metric == "val_loss") in.final_val_loss = s.last, in.best_val_loss = s.min;
    // Recorded once, at the evaluation that reached the target (engine/torch/train/trainer.cpp).
    if (s.metric == "time_to_target_s") in.time_to_target_s = s.min;
    if (s.metric == "tokens_to_target") in.tokens_to_target = s.min;
    if (s.metric == "steps_to_target") in.steps_to_target = s.min;
  }
  const auto config = flatten_config(run.config_json);
  const auto target = config.find("eval.target_val_loss");
  if (target != config.end()) in.target = std::atof(target->second.c_str());
  return in;
}

static std::string fmt(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string format_time_to_target(double seconds, double target) {
  if (!(target > 0)) return "-";
  if (std::isnan(seconds)) return "not reached";
  return seconds >= 120 ? fmt("%.1f min", seconds / 60) : fmt("%.1f s", seconds);
}

static std::vector<std::vector<std::string>> cells(const Scoreboard& b) {
  const bool target = has_target(b);
  std::vector<std::vector<std::string>> t;
  t.push_back({"run", "setup", "tok/s", "speedup", "MFU", "peak memory", "final val loss", "best val loss"});
  if (target) t[0].insert(t[0].end(), {"target", "time to target", "steps to target", "time speedup"});
  for (const ScoreRow& r : b.rows) {
    t.push_back({r.label, r.setup, format_count(r.tok_s), fmt("%.2f×", r.speedup), fmt("%.1f%%", r.mfu * 100),
                 format_bytes(r.peak_mem), fmt("%.4f", r.final_val_loss), fmt("%.4f", r.best_val_loss)});
    if (target)
      t.back().insert(t.back().end(), {fmt("%.4g", r.target), format_time_to_target(r.time_to_target_s, r.target),
                                       fmt("%.0f", r.steps_to_target), fmt("%.2f×", r.target_speedup)});
  }
  return t;
}

// A row per group: its runs' means, tok/s with the spread between them (± sample std, min–max).
static std::vector<std::vector<std::string>> group_cells(const Scoreboard& b) {
  std::vector<std::vector<std::string>> t;
  const bool target = has_target(b);
  t.push_back({"group", "runs", "complete", "tok/s", "± std", "min–max", "speedup", "MFU", "final val loss",
               "best val loss"});
  if (target) t[0].insert(t[0].end(), {"time to target", "± std", "min–max", "reached"});
  for (const ScoreGroup& g : b.groups) {
    std::string runs;
    for (size_t r : g.members) runs += (runs.empty() ? "" : " ") + b.rows[r].label.substr(0, b.rows[r].label.find(' '));
    // "3 of 5": two members failed or diverged (no tok/s or no final val loss); the means are over the rest.
    t.push_back({g.label, runs, std::to_string(g.complete) + " of " + std::to_string(g.members.size()),
                 format_count(g.mean.tok_s), format_count(g.tok_s_std),
                 format_count(g.tok_s_min) + "–" + format_count(g.tok_s_max), fmt("%.2f×", g.mean.speedup),
                 fmt("%.1f%%", g.mean.mfu * 100), fmt("%.4f", g.mean.final_val_loss),
                 fmt("%.4f", g.mean.best_val_loss)});
    if (target)
      t.back().insert(t.back().end(), {format_time_to_target(g.mean.time_to_target_s, g.mean.target),
                                       fmt("%.1f s", g.time_to_target_std),
                                       fmt("%.1f", g.time_to_target_min) + "–" + fmt("%.1f s", g.time_to_target_max),
                                       std::to_string(g.reached) + "/" + std::to_string(g.members.size())});
  }
  return t;
}

// Each group against the baseline's (Welch's t-test): the difference with its 95% interval and p, or "not resolved"
// with the seeds that would resolve it.
static std::vector<std::vector<std::string>> verdict_cells(const Scoreboard& b) {
  std::vector<std::vector<std::string>> t = {{"group", "measure", "difference from the baseline's group"}};
  const auto count = [](double v) { return (v >= 0 ? "+" : "-") + format_count(std::fabs(v)); };
  const auto loss = [](double v) { return fmt("%+.3g", v); };
  const auto seconds = [](double v) { return fmt("%+.1f s", v); };
  for (const ScoreGroup& g : b.groups) {
    const auto add = [&](const char* what, const std::optional<Verdict>& v, const std::function<std::string(double)>& f) {
      if (v) t.push_back({g.label, what, verdict_text(*v, f)});
    };
    add("tok/s", g.tok_s_verdict, count);
    add("final val loss", g.val_loss_verdict, loss);
    add("time to target", g.target_verdict, seconds);
  }
  return t;
}

// "D ×1 (#9), E ×1 (#12)": the groups that have no row and no verdict.
static std::string single_groups_text(const Scoreboard& b) {
  std::string out;
  for (const Scoreboard::SingleGroup& g : b.single_groups) {
    const std::string& label = b.rows[g.member].label;
    out += (out.empty() ? "" : ", ") + g.label + " (" + label.substr(0, label.find(' ')) + ")";
  }
  return out;
}

// Why no group has a verdict ("" when they have): said where the verdicts would be, with what to change.
static std::string no_verdict_text(const Scoreboard& b) {
  for (const ScoreGroup& g : b.groups)
    if (!g.no_verdict.empty())
      return "no verdicts: " + g.no_verdict + " (hint: make the baseline a run of a group with 2 runs or more)";
  return {};
}

static bool has_verdicts(const Scoreboard& b) {
  for (const ScoreGroup& g : b.groups)
    if (g.tok_s_verdict || g.val_loss_verdict || g.target_verdict) return true;
  return false;
}

// ms per step by phase: one column per phase some run reported, then their sum and step_ms beside it.
static std::vector<std::vector<std::string>> phase_cells(const Scoreboard& b) {
  std::vector<int> shown;
  for (int p = 0; p < kPhaseCount; ++p)
    for (const ScoreRow& r : b.rows)
      if (!std::isnan(r.phase_ms[p])) {
        shown.push_back(p);
        break;
      }
  std::vector<std::vector<std::string>> t(1, {"run"});
  for (int p : shown) t[0].push_back(phase_names()[p].label);
  t[0].insert(t[0].end(), {"sum", "step"});
  for (const ScoreRow& r : b.rows) {
    std::vector<std::string> row = {r.label};
    double sum = 0;
    bool any = false;
    for (int p : shown) {
      row.push_back(fmt("%.2f", r.phase_ms[p]));
      if (!std::isnan(r.phase_ms[p])) sum += r.phase_ms[p], any = true;
    }
    row.push_back(fmt("%.2f", any ? sum : kNaN));
    row.push_back(fmt("%.2f", r.step_ms));
    t.push_back(row);
  }
  return t;
}

static std::vector<std::vector<std::string>> diff_cells(const Scoreboard& b) {
  std::vector<std::vector<std::string>> t;
  std::vector<std::string> head = {"config key"};
  for (const ScoreRow& r : b.rows) head.push_back(r.label);
  t.push_back(head);
  for (size_t k = 0; k < b.diff_keys.size(); ++k) {
    std::vector<std::string> row = {b.diff_keys[k]};
    row.insert(row.end(), b.diff_values[k].begin(), b.diff_values[k].end());
    t.push_back(row);
  }
  return t;
}

static size_t width(const std::string& s) {  // UTF-8 code points: "×" is one column
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xc0) != 0x80;
  return n;
}

std::string format_text_table(const std::vector<std::vector<std::string>>& t) {
  std::vector<size_t> w;
  for (const auto& row : t)
    for (size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], width(row[c]));
    }
  std::string out;
  for (const auto& row : t) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(w[c] - width(row[c]) + 2, ' ') : "");
    out += line + "\n";
  }
  return out;
}

static std::string md_table(const std::vector<std::vector<std::string>>& t, size_t left_columns) {
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    out += "|";
    for (const std::string& c : t[i]) {
      std::string cell = c;
      for (size_t p = 0; (p = cell.find('|', p)) != std::string::npos; p += 2) cell.replace(p, 1, "\\|");
      out += " " + cell + " |";
    }
    out += "\n";
    if (i == 0) {
      out += "|";
      for (size_t c = 0; c < t[0].size(); ++c) out += c < left_columns ? "---|" : "---:|";
      out += "\n";
    }
  }
  return out;
}

std::string format_scoreboard_text(const Scoreboard& b) {
  std::string out = format_text_table(cells(b));
  if (!b.groups.empty()) out += "\ngroups (means of their runs):\n" + format_text_table(group_cells(b));
  if (!b.single_groups.empty())
    out += "\ngroups of one run, with no row and no verdict (a group needs 2 runs or more): " +
           single_groups_text(b) + "\n";
  if (const std::string why = no_verdict_text(b); !why.empty()) out += "\n" + why + "\n";
  if (has_verdicts(b))
    out += "\nagainst the baseline's group (Welch's t-test; a 95% interval spanning 0 is not resolved):\n" +
           format_text_table(verdict_cells(b));
  if (has_phases(b))
    out += "\nms per step by phase (mean over reports after the first):\n" + format_text_table(phase_cells(b));
  if (b.rows.size() > 1)
    out += b.diff_keys.empty() ? "\nno config differences\n"
                               : "\nconfig differences:\n" + format_text_table(diff_cells(b));
  return out;
}

std::string format_scoreboard_markdown(const Scoreboard& b) {
  std::string out = md_table(cells(b), 2);
  if (!b.groups.empty()) out += "\nGroups (means of their runs):\n\n" + md_table(group_cells(b), 2);
  if (!b.single_groups.empty())
    out += "\nGroups of one run, with no row and no verdict (a group needs 2 runs or more): " +
           single_groups_text(b) + "\n";
  if (std::string why = no_verdict_text(b); !why.empty()) out += "\n" + (why[0] = 'N', why) + "\n";
  if (has_verdicts(b))
    out += "\nAgainst the baseline's group (Welch's t-test; a 95% interval spanning 0 is not resolved):\n\n" +
           md_table(verdict_cells(b), 3);
  if (has_phases(b))
    out += "\nMilliseconds per step by phase (mean over reports after the first):\n\n" + md_table(phase_cells(b), 1);
  if (b.rows.size() > 1 && !b.diff_keys.empty())
    out += "\nConfig differences:\n\n" + md_table(diff_cells(b), b.rows.size() + 1);
  return out;
}

}  // namespace tokamak
