// Slurm on the chosen host, as the studio needs to know it before it offers "Submit to Slurm": whether the
// host has sbatch (checked there by `tokamak slurm info --json`, never assumed), its partitions and the
// partition, account and QoS remembered from the last submit there (the CLI's slurm.json, read by the CLI:
// its format is spelled once, in app/tokamak/cmd_slurm.cpp). SlurmProbe asks in a child process, one host at
// a time, and keeps the last answer per host.
#pragma once
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>

namespace tokamak::ui {

class ChildProcess;

struct SlurmInfo {
  bool sbatch = false;
  QString why;  // no sbatch (or the host could not be asked): one line
  QStringList partitions;
  QString partition, account, qos;  // remembered for this host ("" = none)
  static SlurmInfo fromJson(const QJsonObject& j);
};

// `--host HOST` for a Slurm command run through a login node; nothing for this computer ("").
QStringList slurmHostArgs(const QString& host);

class SlurmProbe : public QObject {
  Q_OBJECT
 public:
  explicit SlurmProbe(QObject* parent = nullptr);

  // Asks HOST ("" = this computer) again; probed() follows. A probe already under way for another host is
  // cancelled: only the host chosen now matters.
  void probe(const QString& host);
  bool known(const QString& host) const { return infos_.contains(host); }
  SlurmInfo info(const QString& host) const { return infos_.value(host); }
  bool asking(const QString& host) const;  // a probe of HOST is under way

 Q_SIGNALS:
  void probed(const QString& host);

 private:
  void newJob();

  ChildProcess* job_ = nullptr;
  QString asking_;
  QHash<QString, SlurmInfo> infos_;
};

}  // namespace tokamak::ui
