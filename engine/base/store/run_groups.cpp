// Grouping runs and summarising a group (see run_groups.h).
#include "engine/base/store/run_groups.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/util/error.h"

namespace tokamak {

GroupSpec parse_group_spec(const std::string& text) {
  GroupSpec spec;
  if (text.empty() || text == "none") return spec;
  if (text == "seed") return spec.by = GroupSpec::By::kSeed, spec;
  if (text == "tag") return spec.by = GroupSpec::By::kTag, spec;
  if (text.rfind("name:", 0) == 0 && text.size() > 5) {
    spec.by = GroupSpec::By::kName, spec.pattern = text.substr(5);
    try {
      std::regex check(spec.pattern);
    } catch (const std::regex_error& e) {
      throw Error("group pattern '" + spec.pattern + "' is not a regular expression (" + e.what() + ")",
                  "write it as ECMAScript, e.g. name:(.*)-s[0-9]+");
    }
    return spec;
  }
  throw Error("'" + text + "' is not a way to group runs", "use seed, tag, name:REGEX or none");
}

std::vector<int> group_by_config(const std::vector<std::string>& config_jsons) {
  std::vector<std::map<std::string, std::string>> seen;
  std::vector<int> group;
  for (const std::string& json : config_jsons) {
    std::map<std::string, std::string> flat = flatten_config(json);
    flat.erase("train.seed"), flat.erase("name");
    auto it = std::find(seen.begin(), seen.end(), flat);
    group.push_back(static_cast<int>(it - seen.begin()));
    if (it == seen.end()) seen.push_back(std::move(flat));
  }
  return group;
}

GroupInput group_input(const RunInfo& run) {
  GroupInput in{run.name, {}, run.config_json};
  const nlohmann::json tags = nlohmann::json::parse(run.tags_json, nullptr, false);
  if (tags.is_array())
    for (const nlohmann::json& t : tags)
      if (t.is_string()) in.tags.push_back(t.get<std::string>());
  return in;
}

// The key a run is grouped under ("" = alone) for the name and tag specs.
static std::string group_key(const GroupInput& run, const GroupSpec& spec, const std::regex& re) {
  if (spec.by == GroupSpec::By::kTag) return run.tags.empty() ? std::string() : run.tags.front();
  std::smatch m;
  if (!std::regex_search(run.name, m, re)) return {};
  return m.size() > 1 && m[1].matched ? m[1].str() : m[0].str();
}

// What two run names share, cut back to a separator: "lr3-s1" and "lr3-s2" -> "lr3". The first name when they
// share nothing.
static std::string common_stem(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  const auto separator = [](char c) { return c == '-' || c == '_' || c == ' ' || c == '/' || c == '.'; };
  const auto word_ends = [&](const std::string& s) { return n == s.size() || separator(s[n]); };
  if (!(word_ends(a) && word_ends(b)))
    while (n > 0 && !separator(a[n - 1])) --n;  // a partial word ("-s" of "-s1") is no stem
  while (n > 0 && separator(a[n - 1])) --n;
  return n > 0 ? a.substr(0, n) : a;
}

Grouping group_runs(const std::vector<GroupInput>& runs, const GroupSpec& spec) {
  Grouping g;
  const auto add = [&](const std::string& name) {
    g.names.push_back(name);
    g.size.push_back(1);
    g.group.push_back(static_cast<int>(g.names.size()) - 1);
  };
  if (spec.by == GroupSpec::By::kSeed) {
    std::vector<std::string> configs;
    for (const GroupInput& r : runs) configs.push_back(r.config_json);
    g.group = group_by_config(configs);
    for (size_t i = 0; i < runs.size(); ++i) {
      const size_t k = static_cast<size_t>(g.group[i]);
      if (k == g.names.size()) g.names.push_back(runs[i].name), g.size.push_back(0);
      else g.names[k] = common_stem(g.names[k], runs[i].name);
      ++g.size[k];
    }
    return g;
  }
  const std::regex re(spec.by == GroupSpec::By::kName ? spec.pattern : std::string("^$"));
  std::map<std::string, int> by_key;
  for (const GroupInput& r : runs) {
    const std::string key = spec.by == GroupSpec::By::kNone ? std::string() : group_key(r, spec, re);
    auto it = key.empty() ? by_key.end() : by_key.find(key);
    if (it == by_key.end()) {
      add(key.empty() ? r.name : key);
      if (!key.empty()) by_key[key] = g.group.back();
    } else {
      g.group.push_back(it->second);
      ++g.size[static_cast<size_t>(it->second)];
    }
  }
  return g;
}

Band band_over_runs(const std::vector<std::vector<std::pair<double, double>>>& runs) {
  Band b;
  if (runs.empty()) return b;
  std::vector<size_t> at(runs.size(), 0);  // each run's next point: all are in x order, one merge pass
  std::vector<double> here(runs.size());
  for (const auto& [x, first] : runs.front()) {
    bool everywhere = true;
    for (size_t r = 0; r < runs.size() && everywhere; ++r) {
      while (at[r] < runs[r].size() && runs[r][at[r]].first < x) ++at[r];
      everywhere = at[r] < runs[r].size() && runs[r][at[r]].first == x;
      if (everywhere) here[r] = runs[r][at[r]].second;
    }
    if (!everywhere) continue;
    double sum = 0;
    for (double v : here) sum += v;
    b.x.push_back(x), b.mean.push_back(sum / static_cast<double>(runs.size()));
    b.min.push_back(*std::min_element(here.begin(), here.end()));
    b.max.push_back(*std::max_element(here.begin(), here.end()));
    b.std.push_back(sample_std(here));
  }
  return b;
}

double sample_std(const std::vector<double>& values) {
  double sum = 0, n = 0;
  for (double v : values)
    if (!std::isnan(v)) sum += v, ++n;
  if (n == 0) return kNaN;
  if (n == 1) return 0;
  const double mean = sum / n;
  double sq = 0;
  for (double v : values)
    if (!std::isnan(v)) sq += (v - mean) * (v - mean);
  return std::sqrt(sq / (n - 1));
}

// Mean of the members' values that are not NaN; NaN when none has one.
static double mean_of(const std::vector<double>& values) {
  double sum = 0, n = 0;
  for (double v : values)
    if (!std::isnan(v)) sum += v, ++n;
  return n > 0 ? sum / n : kNaN;
}

// The row of group k (two runs or more): its members' means, spreads and how many reached the target.
static ScoreGroup summarise_group(const Scoreboard& board, const Grouping& grouping, size_t k, bool any_val_loss) {
  ScoreGroup g;
  g.label = grouping.names[k] + " ×" + std::to_string(grouping.size[k]);
  for (size_t r = 0; r < board.rows.size() && r < grouping.group.size(); ++r)
    if (grouping.group[r] == static_cast<int>(k)) g.members.push_back(r);
  const auto column = [&](double ScoreRow::*field) {
    std::vector<double> v;
    for (size_t r : g.members) v.push_back(board.rows[r].*field);
    return v;
  };
  const std::vector<double> tok_s = column(&ScoreRow::tok_s);
  g.mean.label = g.label;
  g.mean.setup = board.rows[g.members.front()].setup;
  g.mean.tok_s = mean_of(tok_s);
  g.mean.speedup = mean_of(column(&ScoreRow::speedup));
  g.mean.mfu = mean_of(column(&ScoreRow::mfu));
  g.mean.final_val_loss = mean_of(column(&ScoreRow::final_val_loss));
  g.mean.best_val_loss = mean_of(column(&ScoreRow::best_val_loss));
  g.mean.step_ms = mean_of(column(&ScoreRow::step_ms));
  for (size_t r : g.members)
    if (!std::isnan(board.rows[r].peak_mem))
      g.mean.peak_mem =
          std::isnan(g.mean.peak_mem) ? board.rows[r].peak_mem : std::max(g.mean.peak_mem, board.rows[r].peak_mem);
  for (int p = 0; p < kPhaseCount; ++p) {
    std::vector<double> v;
    for (size_t r : g.members) v.push_back(board.rows[r].phase_ms[static_cast<size_t>(p)]);
    g.mean.phase_ms[static_cast<size_t>(p)] = mean_of(v);
  }
  g.tok_s_std = sample_std(tok_s);
  // Time to target over the members that reached it; how many did is a column of its own.
  const std::vector<double> ttl = column(&ScoreRow::time_to_target_s);
  g.mean.target = board.rows[g.members.front()].target;
  g.mean.time_to_target_s = mean_of(ttl);
  g.mean.steps_to_target = mean_of(column(&ScoreRow::steps_to_target));
  g.mean.tokens_to_target = mean_of(column(&ScoreRow::tokens_to_target));
  g.mean.target_speedup = mean_of(column(&ScoreRow::target_speedup));
  g.time_to_target_std = sample_std(ttl);
  for (double v : ttl)
    if (!std::isnan(v)) {
      ++g.reached;
      g.time_to_target_min = std::isnan(g.time_to_target_min) ? v : std::min(g.time_to_target_min, v);
      g.time_to_target_max = std::isnan(g.time_to_target_max) ? v : std::max(g.time_to_target_max, v);
    }
  for (size_t r : g.members)
    if (!std::isnan(board.rows[r].tok_s) && (!any_val_loss || !std::isnan(board.rows[r].final_val_loss))) ++g.complete;
  for (double v : tok_s)
    if (!std::isnan(v)) {
      g.tok_s_min = std::isnan(g.tok_s_min) ? v : std::min(g.tok_s_min, v);
      g.tok_s_max = std::isnan(g.tok_s_max) ? v : std::max(g.tok_s_max, v);
    }
  return g;
}

// Each group against the baseline's: is the difference bigger than the spread between seeds?
static void compare_with_baseline(Scoreboard& board) {
  const ScoreGroup* base = nullptr;
  for (ScoreGroup& g : board.groups)
    for (size_t r : g.members)
      if (r == board.baseline) g.holds_baseline = true, base = &g;
  if (!base) {
    // The baseline stands alone: every group would lose its verdict without a word, so each says why.
    std::string alone = "the baseline's group";
    for (const Scoreboard::SingleGroup& s : board.single_groups)
      if (s.member == board.baseline) alone += " (" + s.label + ")";
    for (ScoreGroup& g : board.groups) g.no_verdict = alone + " has one run: a verdict needs 2 runs a side";
    return;
  }
  const auto values = [&](const ScoreGroup& g, double ScoreRow::*field) {
    std::vector<double> v;
    for (size_t r : g.members) v.push_back(board.rows[r].*field);
    return v;
  };
  // A run with a target that never reached it is censored (+inf), not left out: the group's time to target is
  // no better for the runs that did not get there.
  const auto times = [&](const ScoreGroup& g) {
    std::vector<double> v;
    for (size_t r : g.members) {
      const ScoreRow& row = board.rows[r];
      v.push_back(std::isnan(row.time_to_target_s) && row.target > 0 ? std::numeric_limits<double>::infinity()
                                                                      : row.time_to_target_s);
    }
    return v;
  };
  for (ScoreGroup& g : board.groups) {
    if (&g == base) continue;
    g.tok_s_verdict = welch_verdict(values(*base, &ScoreRow::tok_s), values(g, &ScoreRow::tok_s));
    g.val_loss_verdict = welch_verdict(values(*base, &ScoreRow::final_val_loss), values(g, &ScoreRow::final_val_loss));
    g.target_verdict = welch_verdict(times(*base), times(g));
  }
}

void add_group_rows(Scoreboard& board, const Grouping& grouping) {
  board.groups.clear();
  board.single_groups.clear();
  // A run lacks a final val loss because it failed, unless no run of the board evaluated at all.
  bool any_val_loss = false;
  for (const ScoreRow& row : board.rows) any_val_loss = any_val_loss || !std::isnan(row.final_val_loss);
  for (size_t k = 0; k < grouping.names.size(); ++k) {
    if (grouping.size[k] < 2) {
      for (size_t r = 0; r < board.rows.size() && r < grouping.group.size(); ++r)
        if (grouping.group[r] == static_cast<int>(k))
          board.single_groups.push_back({grouping.names[k] + " ×1", r});
      continue;
    }
    board.groups.push_back(summarise_group(board, grouping, k, any_val_loss));
  }
  compare_with_baseline(board);
}

}  // namespace tokamak
