// HostJob (see host_job.h).
#include "ui/remote/host_job.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>

#include "ui/common/programs.h"

namespace tokamak::ui {

HostJob::~HostJob() {
  if (!process_) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(2000);
}

bool HostJob::start(const QString& command, const QString& host, const QString& tokamak, const QStringList& args) {
  return startCommand(QStringList{"remote", command, "--host", host, "--tokamak", tokamak} + args +
                      QStringList{"--json"});
}

bool HostJob::startCommand(const QStringList& args) {
  if (process_) return false;
  const QString front = tokamakFrontPath();
  if (front.isEmpty()) {
    QTimer::singleShot(0, this, [this] { Q_EMIT finished({}, engineMissingText()); });
    return true;
  }
  cancelled_ = false;
  last_ = {};
  process_ = new QProcess(this);
  connect(process_, &QProcess::readyReadStandardOutput, this, &HostJob::readLines);
  connect(process_, &QProcess::finished, this, &HostJob::ended);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) ended(-1, QProcess::NormalExit);
  });
  process_->start(front, args);
  return true;
}

void HostJob::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();  // a download keeps its partial copy: the next one continues it
}

void HostJob::readLines() {
  while (process_ && process_->canReadLine()) {
    const QJsonObject j = QJsonDocument::fromJson(process_->readLine()).object();
    if (j.isEmpty()) continue;
    if (j["event"].toString() == QLatin1String("progress"))
      Q_EMIT progress(j["what"].toString(), j["done"].toInteger(), j["total"].toInteger());
    else last_ = j;
  }
}

void HostJob::ended(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  readLines();
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  if (status == QProcess::NormalExit && exitCode == 0) return Q_EMIT finished(last_, {});
  const QStringList lines =
      QString::fromUtf8(p->readAllStandardError()).split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts);
  QString why = cancelled_ ? tr("cancelled") : errorLineOf(lines);
  if (why.startsWith("tokamak: ")) why = why.mid(9);
  if (why.isEmpty()) why = status == QProcess::CrashExit ? tr("the tokamak process crashed") : p->errorString();
  Q_EMIT finished(last_, why);
}

}  // namespace tokamak::ui
