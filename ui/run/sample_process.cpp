// SampleProcess: `tokamak-engine generate` in a child (see sample_process.h).
#include "ui/run/sample_process.h"

#include <QRegularExpression>

#include "ui/run/engine_process.h"

namespace tokamak::ui {

SampleProcess::~SampleProcess() {
  if (!process_) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(2000);
}

bool SampleProcess::start(const SampleNowRequest& r) {
  if (process_) return false;
  const QString engine = enginePath();
  if (engine.isEmpty()) {
    Q_EMIT finished(r.step, {}, engineMissingText());
    return true;
  }
  step_ = r.step;
  cancelled_ = false;
  process_ = new QProcess(this);
  // Sampling needs none of the training switches; fp32 on the CPU works wherever the checkpoint came from.
  process_->start(engine, {"generate", "--checkpoint", r.checkpoint, "--prompt", r.prompt, "--tokens",
                           QString::number(r.tokens), "--temperature", QString::number(r.temperature), "--top-k",
                           QString::number(r.topK), "--seed", QString::number(r.seed), "--device", "cpu"});
  connect(process_, &QProcess::finished, this, &SampleProcess::ended);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) ended(-1, QProcess::NormalExit);
  });
  return true;
}

void SampleProcess::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();
}

void SampleProcess::ended(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  if (status == QProcess::NormalExit && exitCode == 0) {
    QString text = QString::fromUtf8(p->readAllStandardOutput());
    if (text.endsWith('\n')) text.chop(1);
    return Q_EMIT finished(step_, text, {});
  }
  const QStringList lines =
      QString::fromUtf8(p->readAllStandardError()).split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts);
  QString why = cancelled_ ? tr("cancelled") : errorLineOf(lines);
  if (why.isEmpty()) why = status == QProcess::CrashExit ? tr("the sampling process crashed") : p->errorString();
  Q_EMIT finished(step_, {}, why);
}

}  // namespace tokamak::ui
