// EngineJob: a one-off `tokamak-engine` command in a child (see engine_job.h).
#include "ui/live/engine_job.h"

#include <QRegularExpression>
#include <QTimer>

#include "ui/common/programs.h"

namespace tokamak::ui {

EngineJob::~EngineJob() {
  if (!process_) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(2000);
}

bool EngineJob::start(const QStringList& args) {
  if (process_) return false;
  const QString engine = enginePath();
  if (engine.isEmpty()) {
    // Reported from the event loop, as a real failure would be, so callers handle one path.
    QTimer::singleShot(0, this, [this] { Q_EMIT finished({}, engineMissingText()); });
    return true;
  }
  cancelled_ = false;
  process_ = new QProcess(this);
  connect(process_, &QProcess::finished, this, &EngineJob::ended);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) ended(-1, QProcess::NormalExit);
  });
  process_->start(engine, args);
  return true;
}

void EngineJob::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();
}

void EngineJob::ended(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  const QString out = QString::fromUtf8(p->readAllStandardOutput());
  if (status == QProcess::NormalExit && exitCode == 0) return Q_EMIT finished(out, {});
  const QStringList lines =
      QString::fromUtf8(p->readAllStandardError()).split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts);
  QString why = cancelled_ ? tr("cancelled") : errorLineOf(lines);
  if (why.isEmpty()) why = status == QProcess::CrashExit ? tr("the engine process crashed") : p->errorString();
  Q_EMIT finished(out, why);
}

}  // namespace tokamak::ui
