// Finding tokamak-engine and tokamak (see programs.h).
#include "ui/common/programs.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QStringList>

namespace tokamak::ui {

QString tokamakFrontPath() {
  const QString engine = enginePath();
  if (engine.isEmpty()) return {};
  const QString front = QFileInfo(engine).dir().filePath("tokamak");
  return QFileInfo(front).isExecutable() ? front : QString();
}

QString enginePath() {
  const QString name = QStringLiteral("tokamak-engine");
  QStringList candidates;
  if (qEnvironmentVariableIsSet("TOKAMAK_ENGINE_BIN")) candidates << qEnvironmentVariable("TOKAMAK_ENGINE_BIN");
  const QString app = QCoreApplication::applicationDirPath();
  candidates << app + "/" + name << app + "/../" + name << app + "/../app/" + name;
  if (qEnvironmentVariableIsSet("TOKAMAK_TOKAMAK_BIN"))
    candidates << QFileInfo(qEnvironmentVariable("TOKAMAK_TOKAMAK_BIN")).dir().filePath(name);
  for (const QString& c : candidates) {
    QFileInfo f(c);
    if (f.isFile() && f.isExecutable()) return f.canonicalFilePath();
  }
  return QStandardPaths::findExecutable(name);
}

QString engineMissingText() {
  return QCoreApplication::translate("tokamak",
                                     "tokamak-engine was not found beside the studio or on PATH "
                                     "(hint: build it with scripts/build.sh, or set TOKAMAK_ENGINE_BIN)");
}

}  // namespace tokamak::ui
