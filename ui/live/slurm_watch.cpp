// SlurmWatch (see slurm_watch.h).
#include "ui/live/slurm_watch.h"

#include "ui/common/child_process.h"
#include "ui/remote/slurm_info.h"

namespace tokamak::ui {

SlurmWatch::SlurmWatch(QObject* parent)
    : QObject(parent), status_(new ChildProcess(this)), cancel_(new ChildProcess(this)) {
  timer_.setSingleShot(true);
  connect(&timer_, &QTimer::timeout, this, [this] {
    if (job_ <= 0 || status_->isRunning()) return;
    status_->startTokamak(QStringList{"slurm", "status", QString::number(job_), "--json"} + slurmHostArgs(host_));
  });
  connect(status_, &ChildProcess::finished, this, [this](const QString& error) {
    if (job_ > 0) Q_EMIT polled(status_->result(), error);
  });
  connect(cancel_, &ChildProcess::finished, this, [this](const QString& error) {
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
    cancel_->startTokamak(QStringList{"slurm", "cancel", QString::number(job_)} + slurmHostArgs(host_));
}

}  // namespace tokamak::ui
