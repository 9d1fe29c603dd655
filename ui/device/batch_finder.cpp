// BatchFinder: the `find-batch` child and its JSON lines (see batch_finder.h).
#include "ui/device/batch_finder.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryFile>
#include <QTimer>
#include <algorithm>

#include "ui/common/programs.h"

namespace tokamak::ui {

BatchFinder::~BatchFinder() {
  if (!process_) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(2000);
}

void BatchFinder::start(const Config& config) {
  if (process_) return;
  const QString engine = enginePath();
  if (engine.isEmpty()) {
    QTimer::singleShot(0, this, [this] { Q_EMIT finished(0, engineMissingText()); });
    return;
  }
  config_ = std::make_unique<QTemporaryFile>();
  if (!config_->open() || config_->write(QByteArray::fromStdString(config_to_json(config))) < 0 || !config_->flush()) {
    const QString why = tr("cannot write the setup for the search: %1").arg(config_->errorString());
    QTimer::singleShot(0, this, [this, why] { Q_EMIT finished(0, why); });
    return;
  }
  cancelled_ = false;
  largest_ = -1;
  pending_.clear();
  process_ = new QProcess(this);
  connect(process_, &QProcess::readyReadStandardOutput, this, &BatchFinder::readLines);
  connect(process_, &QProcess::finished, this, &BatchFinder::ended);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) ended(-1, QProcess::NormalExit);
  });
  process_->start(engine, {"find-batch", "--json", "--config", config_->fileName()});
}

void BatchFinder::cancel() {
  if (!process_) return;
  cancelled_ = true;
  process_->kill();
}

void BatchFinder::readLines() {
  pending_ += process_->readAllStandardOutput();
  int newline;
  while ((newline = int(pending_.indexOf('\n'))) >= 0) {
    const QJsonObject j = QJsonDocument::fromJson(pending_.left(newline)).object();
    pending_.remove(0, newline + 1);
    const QString event = j.value(QStringLiteral("event")).toString();
    const qint64 batch = j.value(QStringLiteral("batch")).toInteger();
    if (event == QLatin1String("try")) Q_EMIT tried(batch, j.value(QStringLiteral("fits")).toBool());
    else if (event == QLatin1String("largest")) largest_ = batch;
  }
}

void BatchFinder::ended(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  readLines();  // the last lines may come with the exit
  QProcess* p = process_;
  process_ = nullptr;
  p->disconnect(this);
  p->deleteLater();
  config_.reset();
  if (status == QProcess::NormalExit && exitCode == 0 && largest_ >= 0) return Q_EMIT finished(largest_, {});
  const QStringList lines =
      QString::fromUtf8(p->readAllStandardError()).split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts);
  if (cancelled_) return Q_EMIT finished(std::max<qint64>(largest_, 0), {});  // as far as it got, no error
  QString why = errorLineOf(lines);
  if (why.isEmpty()) why = status == QProcess::CrashExit ? tr("the engine process crashed") : p->errorString();
  Q_EMIT finished(std::max<qint64>(largest_, 0), why);
}

}  // namespace tokamak::ui
