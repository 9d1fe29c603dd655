// SlurmWatch (see slurm_watch.h).
#include "ui/live/slurm_watch.h"

#include "ui/remote/host_job.h"
#include "ui/remote/slurm_info.h"

namespace tokamak::ui {

SlurmWatch::SlurmWatch(QObject* parent) : QObject(parent), status_(new HostJob(this)), cancel_(new HostJob(this)) {
  timer_.setSingleShot(true);
  connect(&timer_, &QTimer::timeout, this, [this] {
    if (job_ <= 0 || status_->isRunning()) return;
    status_->startCommand(QStringList{"slurm", "status", QString::number(job_), "--json"} + slurmHostArgs(host_));
  });
  connect(status_, &HostJob::finished, this, [this](const QJsonObject& r, const QString& error) {
    if (job_ > 0) Q_EMIT polled(r, error);
  });
  connect(cancel_, &HostJob::finished, this, [this](const QJsonObject&, const QString& error) {
    if (!error.isEmpty()) Q_EMIT cancelFailed(error);
  });
}

void SlurmWatch::watch(const QString& host, qint64 job) {
  host_ = host, job_ = job;
  timer_.stop();
}

void SlurmWatch::pollSoon(int delayMs) {
  if (job_ > 0 && !timer_.isActive() && !status_->isRunning()) timer_.start(delayMs);
}

void SlurmWatch::cancelJob() {
  if (job_ > 0 && !cancel_->isRunning())
    cancel_->startCommand(QStringList{"slurm", "cancel", QString::number(job_)} + slurmHostArgs(host_));
}

}  // namespace tokamak::ui
