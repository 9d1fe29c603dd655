// BatchFinder: the `find-batch` child and its JSON lines (see batch_finder.h).
#include "ui/device/batch_finder.h"

#include <QJsonObject>
#include <QTemporaryFile>
#include <QTimer>
#include <algorithm>

#include "ui/common/child_process.h"

namespace tokamak::ui {

BatchFinder::BatchFinder(QObject* parent) : QObject(parent), child_(new ChildProcess(this)) {
  connect(child_, &ChildProcess::jsonLine, this, [this](const QJsonObject& j) {
    const QString event = j.value(QStringLiteral("event")).toString();
    const qint64 batch = j.value(QStringLiteral("batch")).toInteger();
    if (event == QLatin1String("try")) Q_EMIT tried(batch, j.value(QStringLiteral("fits")).toBool());
    else if (event == QLatin1String("largest")) largest_ = batch;
  });
  connect(child_, &ChildProcess::finished, this, [this](const QString& error) {
    config_.reset();
    if (error.isEmpty() && largest_ >= 0) return Q_EMIT finished(largest_, {});
    if (child_->wasCancelled()) return Q_EMIT finished(std::max<qint64>(largest_, 0), {});  // as far as it got
    Q_EMIT finished(std::max<qint64>(largest_, 0), error.isEmpty() ? tr("the search gave no answer") : error);
  });
}

bool BatchFinder::isRunning() const { return child_->isRunning(); }

void BatchFinder::start(const Config& config) {
  if (child_->isRunning()) return;
  config_ = std::make_unique<QTemporaryFile>();
  if (!config_->open() || config_->write(QByteArray::fromStdString(config_to_json(config))) < 0 || !config_->flush()) {
    const QString why = tr("cannot write the setup for the search: %1").arg(config_->errorString());
    QTimer::singleShot(0, this, [this, why] { Q_EMIT finished(0, why); });
    return;
  }
  largest_ = -1;
  child_->startEngine({"find-batch", "--json", "--config", config_->fileName()});
}

void BatchFinder::cancel() { child_->cancel(); }

}  // namespace tokamak::ui
