// The Sweep… dialog's form ↔ sweep file (see sweep_form.h). nlohmann's ordered_json, not QJsonObject: the
// order of the swept keys is the grid's order (the first key outermost) and QJsonObject sorts its keys.
#include "ui/sweep/sweep_form.h"

#include <QRegularExpression>
#include <nlohmann/json.hpp>

namespace tokamak::ui {
namespace {

using ojson = nlohmann::ordered_json;

ojson valueOf(const QString& text) {
  const QString t = text.trimmed();
  if (t == QLatin1String("true") || t == QLatin1String("false")) return t == QLatin1String("true");
  bool ok = false;
  const qlonglong i = t.toLongLong(&ok);
  if (ok) return static_cast<int64_t>(i);
  const double d = t.toDouble(&ok);
  if (ok) return d;
  return t.toStdString();
}

QString textOf(const ojson& v) {
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_number_float()) return QString::number(v.get<double>(), 'g', 6);
  return QString::fromStdString(v.dump());
}

}  // namespace

QStringList splitValues(const QString& text) {
  QStringList out;
  for (const QString& part : text.split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts))
    out << part.trimmed();
  return out;
}

std::string sweepFileText(const SweepForm& f, const std::string& baseJson) {
  ojson root = ojson::object();
  root["name"] = f.name.toStdString();
  if (!baseJson.empty()) root["base"] = ojson::parse(baseJson, nullptr, false);
  ojson sweep = ojson::object();
  for (const SweepAxis& a : f.axes) {
    if (a.key.trimmed().isEmpty()) continue;
    if (a.range) {
      ojson r = {{"min", a.min}, {"max", a.max}};
      if (!f.random) r["count"] = a.count;
      r["scale"] = a.log ? "log" : "linear";
      sweep[a.key.trimmed().toStdString()] = r;
    } else {
      ojson list = ojson::array();
      for (const QString& v : a.values) list.push_back(valueOf(v));
      sweep[a.key.trimmed().toStdString()] = list;
    }
  }
  root["sweep"] = sweep;
  root["method"] = f.random ? "random" : "grid";
  if (f.random) root["count"] = f.count, root["seed"] = f.seed;
  if (!f.seeds.isEmpty()) {
    ojson seeds = ojson::array();
    for (qint64 s : f.seeds) seeds.push_back(s);
    root["seeds"] = seeds;
  }
  root["metric"] = f.metric.toStdString();
  root["direction"] = f.maximize ? "max" : "min";
  if (f.asha) root["early_stopping"] = {{"method", "asha"}, {"min_steps", f.minSteps}, {"eta", f.eta}};
  return root.dump(2);
}

QString sweepFormFromFile(const std::string& text, SweepForm* form, std::string* baseJson) {
  const ojson root = ojson::parse(text, nullptr, false);
  if (!root.is_object()) return QObject::tr("not a sweep file: a JSON object is expected (docs/SWEEPS.md)");
  SweepForm f;
  f.name = QString::fromStdString(root.value("name", std::string("sweep")));
  if (root.contains("sweep") && root["sweep"].is_object())
    for (const auto& [key, spec] : root["sweep"].items()) {
      SweepAxis a;
      a.key = QString::fromStdString(key);
      if (spec.is_array()) {
        for (const ojson& v : spec) a.values << textOf(v);
      } else if (spec.is_object() && spec.contains("min") && spec["min"].is_number() && spec.contains("max") &&
                 spec["max"].is_number()) {
        a.range = true;
        a.min = spec["min"].get<double>(), a.max = spec["max"].get<double>();
        a.count = spec.value("count", 4);
        a.log = spec.value("scale", std::string("linear")) == "log";
      } else {
        return QObject::tr("\"%1\" is neither a list of values nor a range").arg(a.key);
      }
      f.axes << a;
    }
  f.random = root.value("method", std::string("grid")) == "random";
  f.count = root.value("count", 8);
  f.seed = root.value("seed", int64_t{0});
  if (root.contains("seeds") && root["seeds"].is_array())
    for (const ojson& s : root["seeds"])
      if (s.is_number_integer()) f.seeds << s.get<int64_t>();
  f.metric = QString::fromStdString(root.value("metric", std::string("final_val_loss")));
  f.maximize = root.value("direction", std::string("min")) == "max";
  if (root.contains("early_stopping") && root["early_stopping"].is_object()) {
    f.asha = true;
    f.minSteps = root["early_stopping"].value("min_steps", int64_t{10});
    f.eta = root["early_stopping"].value("eta", int64_t{3});
  }
  *form = f;
  *baseJson = root.contains("base") ? root["base"].dump() : std::string();
  return {};
}

}  // namespace tokamak::ui
