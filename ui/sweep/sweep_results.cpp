// Reading one sweep for the view (see sweep_results.h).
#include "ui/sweep/sweep_results.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/base/store/run_store.h"
#include "engine/fleet/queue/sweep_store.h"

namespace tokamak::ui {
namespace {

using json = nlohmann::json;

const json* valueAt(const json& config, const std::string& key) {
  const size_t dot = key.find('.');
  if (dot == std::string::npos) return config.contains(key) ? &config[key] : nullptr;
  const std::string a = key.substr(0, dot), b = key.substr(dot + 1);
  return config.contains(a) && config[a].is_object() && config[a].contains(b) ? &config[a][b] : nullptr;
}

QString textOf(const json& v) {
  return v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString::fromStdString(v.dump());
}

// The keys as the file swept them: a log range, or a list whose values are not all numbers (a choice).
QList<SweptKey> keysOf(const std::string& specJson) {
  const nlohmann::ordered_json spec = nlohmann::ordered_json::parse(specJson, nullptr, false);
  QList<SweptKey> keys;
  for (const std::string& key : swept_keys(specJson)) {
    SweptKey k;
    k.key = QString::fromStdString(key);
    if (spec.is_object() && spec.contains("sweep") && spec["sweep"].contains(key)) {
      const auto& s = spec["sweep"][key];
      if (s.is_object()) k.log = s.value("scale", std::string("linear")) == "log";
      if (s.is_array())
        for (const auto& v : s) {
          k.choice = k.choice || !v.is_number();
          k.categories << QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump());
        }
      if (!k.choice) k.categories.clear();
    }
    keys << k;
  }
  return keys;
}

}  // namespace

bool SweepResults::ranksAbove(const SweepTrialRow& a, const SweepTrialRow& b, bool maximize) {
  const bool fa = std::isfinite(a.metric), fb = std::isfinite(b.metric);
  if (fa != fb) return fa;
  if (fa && a.rung != b.rung) return a.rung > b.rung;
  if (fa && a.metric != b.metric) return maximize ? a.metric > b.metric : a.metric < b.metric;
  return a.point < b.point;
}

SweepResults readSweep(tokamak::RunStore& store, qint64 id) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SweepStore sweeps(store);
  const SweepStatus st = sweeps.status(id);
  SweepResults s;
  s.id = st.id, s.name = QString::fromStdString(st.name), s.metric = QString::fromStdString(st.metric);
  s.maximize = st.maximize, s.minSteps = st.asha.min_steps, s.eta = st.asha.eta;
  s.keys = keysOf(st.spec_json);
  for (int k = 0; k < s.keys.size() && s.colorKey < 0; ++k)
    if (s.keys[k].choice) s.colorKey = k;
  s.importance = sweep_importance(st);
  std::map<QString, std::pair<double, int>> sums;  // the colour key's values at the first rung
  for (const SweepTrialStatus& t : st.trials) {
    SweepTrialRow r;
    r.queueId = t.item.id, r.point = t.item.point;
    r.name = QString::fromStdString(t.item.name), r.state = QString::fromStdString(t.item.state);
    r.runUid = QString::fromStdString(t.item.run_uid), r.folder = QString::fromStdString(t.item.folder);
    r.error = QString::fromStdString(t.item.error), r.configJson = QString::fromStdString(t.item.config_json);
    const json config = json::parse(t.item.config_json, nullptr, false);
    for (const SweptKey& k : s.keys) {
      const json* v = valueAt(config, k.key.toStdString());
      if (!v) r.values << QVariant();
      else if (k.choice || !v->is_number()) r.values << textOf(*v);
      else r.values << v->get<double>();
    }
    r.metric = nan;
    if (!t.rungs.empty()) {
      const RungRow& top = t.rungs.back();
      r.rung = top.rung, r.step = top.step, r.metric = top.metric;
      if (s.firstRungStep == 0 || t.rungs.front().step < s.firstRungStep) s.firstRungStep = t.rungs.front().step;
      if (s.colorKey >= 0 && std::isfinite(t.rungs.front().metric)) {
        auto& [sum, n] = sums[r.values[s.colorKey].toString()];
        sum += t.rungs.front().metric, ++n;
      }
    }
    r.finished = r.state == QLatin1String("done");
    if (r.state == QLatin1String("queued")) ++s.queued;
    else if (r.state == QLatin1String("running")) ++s.running;
    else ++s.ended;
    s.trials << r;
  }
  std::stable_sort(s.trials.begin(), s.trials.end(), [&](const SweepTrialRow& a, const SweepTrialRow& b) {
    return SweepResults::ranksAbove(a, b, s.maximize);
  });
  QStringList marked;
  for (int i = 0; i < s.trials.size(); ++i) {
    SweepTrialRow& r = s.trials[i];
    r.rank = i + 1;
    if (s.colorKey < 0 || !std::isfinite(r.metric)) continue;
    const QString value = r.values[s.colorKey].toString();
    if (marked.contains(value)) continue;
    marked << value;
    r.bestOf = s.keys[s.colorKey].key + QLatin1Char('=') + value;
  }
  if (s.colorKey >= 0)
    for (const QString& c : s.keys[s.colorKey].categories)
      if (sums.count(c)) s.choiceMeans << qMakePair(c, sums[c].first / sums[c].second);
  return s;
}

QString sweepLabel(const SweepResults& s) {
  return QObject::tr("%1 · %2 (%n trial(s))", nullptr, int(s.trials.size())).arg(s.id).arg(s.name);
}

}  // namespace tokamak::ui
