// SlurmProbe (see slurm_info.h).
#include "ui/remote/slurm_info.h"

#include <QJsonArray>

#include "ui/common/child_process.h"

namespace tokamak::ui {

SlurmInfo SlurmInfo::fromJson(const QJsonObject& j) {
  SlurmInfo i;
  i.sbatch = j["sbatch"].toBool();
  i.why = j["why"].toString();
  for (const QJsonValue& p : j["partitions"].toArray()) i.partitions << p.toString();
  const QJsonObject r = j["remembered"].toObject();
  i.partition = r["partition"].toString(), i.account = r["account"].toString(), i.qos = r["qos"].toString();
  return i;
}

QStringList slurmHostArgs(const QString& host) { return host.isEmpty() ? QStringList{} : QStringList{"--host", host}; }

SlurmProbe::SlurmProbe(QObject* parent) : QObject(parent) { newJob(); }

void SlurmProbe::newJob() {
  job_ = new ChildProcess(this);
  connect(job_, &ChildProcess::finished, this, [this](const QString& error) {
    SlurmInfo i = SlurmInfo::fromJson(job_->result());
    if (!error.isEmpty()) i.sbatch = false, i.why = error;  // tokamak itself failed: that line is the reason
    infos_[asking_] = i;
    Q_EMIT probed(asking_);
  });
}

void SlurmProbe::probe(const QString& host) {
  if (job_->isRunning()) {
    if (asking_ == host) return;
    job_->disconnect(this);  // the answer for the host no longer chosen is not wanted
    job_->cancel();
    job_->deleteLater();
    newJob();
  }
  asking_ = host;
  job_->startTokamak(QStringList{"slurm", "info", "--json"} + slurmHostArgs(host));
}

bool SlurmProbe::asking(const QString& host) const { return job_->isRunning() && asking_ == host; }

}  // namespace tokamak::ui
