// SlurmWatch: what Slurm says about the live page's job, asked through the CLI (`tokamak slurm status JOB
// --json`, here or with --host on the login node) one child at a time, and Stop as `tokamak slurm cancel JOB`
// (scancel: the ranks get SIGTERM, write a checkpoint and end the run stopped). RunController polls while the
// run has no step yet (the queue state: pending and why, running where) and while a requeued job waits.
#pragma once
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QTimer>

namespace tokamak::ui {

class ChildProcess;

class SlurmWatch : public QObject {
  Q_OBJECT
 public:
  explicit SlurmWatch(QObject* parent = nullptr);

  void watch(const QString& host, qint64 job);  // job 0: none
  qint64 job() const { return job_; }
  const QString& host() const { return host_; }
  // Asks for the job's state after delayMs (once; a question already due or under way stands).
  void pollSoon(int delayMs = 2000);
  void cancelJob();

 Q_SIGNALS:
  // status: the CLI's object (state, reason, nodes, summary "pending: PartitionDown (…)", pending, running,
  // ended); error: "" or the CLI's one line (Slurm no longer knows the job: it ended MinJobAge ago, or never was).
  void polled(const QJsonObject& status, const QString& error);
  void cancelFailed(const QString& error);

 private:
  QString host_;
  qint64 job_ = 0;
  QTimer timer_;
  ChildProcess* status_;
  ChildProcess* cancel_;
};

}  // namespace tokamak::ui
