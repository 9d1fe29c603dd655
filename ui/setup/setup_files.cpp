// Saved setups and experiment ladders (see setup_files.h).
#include "ui/setup/setup_files.h"

#include <nlohmann/json.hpp>

#include <QCoreApplication>
#include <QFile>
#include <QSaveFile>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/config/ladder.h"
#include "engine/base/util/error.h"
#include "engine/base/util/output_path.h"

namespace tokamak::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("SetupFiles", text); }

}  // namespace

bool saveSetup(const QString& path, const Config& config, QString* error, bool replace) {
  try {
    check_output_file(path.toStdString(), {"the setup", {".json"}, replace, {}});
  } catch (const std::exception& e) {
    *error = QString::fromUtf8(e.what());
    return false;
  }
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly)) {
    *error = tr("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  f.write(QByteArray::fromStdString(config_to_json(config, 2) + "\n"));
  if (!f.commit()) {
    *error = tr("cannot write %1: %2").arg(path, f.errorString());
    return false;
  }
  return true;
}

bool loadSetup(const QString& path, Config* config, QString* error) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    *error = tr("cannot open %1: %2").arg(path, f.errorString());
    return false;
  }
  try {
    // The engine's reader names a wrong key or type itself.
    *config = config_from_json(f.readAll().toStdString());
    return true;
  } catch (const Error& e) {
    *error = tr("%1: %2").arg(path, QString::fromStdString(e.what()));
    return false;
  }
}

bool readLadder(const QString& path, QString* ladderName, QStringList* rungNames, QList<Config>* configs,
                QString* error) {
  try {
    Ladder ladder = load_ladder(path.toStdString());
    *ladderName = QString::fromStdString(ladder.name);
    rungNames->clear(), configs->clear();
    for (LadderRung& rung : ladder.rungs) {
      if (rung.config.name.empty()) rung.config.name = ladder.name + "/" + rung.name;
      *rungNames << QString::fromStdString(rung.name);
      *configs << rung.config;
    }
    return true;
  } catch (const Error& e) {
    *error = QString::fromStdString(e.what());
    return false;
  }
}

std::string setupWithLeftOutKeys(const std::string& now, const std::string& saved, const QStringList& keys) {
  if (keys.isEmpty()) return now;
  nlohmann::json out = nlohmann::json::parse(now, nullptr, false), old = nlohmann::json::parse(saved, nullptr, false);
  if (!out.is_object() || !old.is_object()) return now;
  try {
    old = upgrade_config_json(old);
  } catch (const Error&) {
    return now;
  }
  for (const QString& k : keys) {
    const std::string key = k.toStdString();
    const size_t dot = key.find('.');
    if (dot == std::string::npos) {
      if (!out.contains(key) && old.contains(key)) out[key] = old[key];
      continue;
    }
    const std::string section = key.substr(0, dot), leaf = key.substr(dot + 1);
    if (old.contains(section) && old[section].is_object() && old[section].contains(leaf) &&
        !(out.contains(section) && out[section].is_object() && out[section].contains(leaf)))
      out[section][leaf] = old[section][leaf];
  }
  return out.dump();
}

}  // namespace tokamak::ui
