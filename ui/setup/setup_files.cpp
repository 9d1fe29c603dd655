// Saved setups and experiment ladders (see setup_files.h).
#include "ui/setup/setup_files.h"

#include <QCoreApplication>
#include <QFile>
#include <QSaveFile>

#include "engine/core/config/ladder.h"
#include "engine/core/util/error.h"

namespace tokamak::ui {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("SetupFiles", text); }

}  // namespace

bool saveSetup(const QString& path, const Config& config, QString* error) {
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

}  // namespace tokamak::ui
