// HostJob: one `tokamak remote COMMAND --host HOST --tokamak CMD ... --json` in a child process — download a
// checkpoint, evaluate or export a host's run — or one `tokamak slurm ...` command (here or on a login node),
// so the window never waits on the network or the scheduler. Its stdout is JSON
// lines: `progress` events (shown as a progress bar) and, at the end, the command's result object.
#pragma once
#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace tokamak::ui {

class HostJob : public QObject {
  Q_OBJECT
 public:
  explicit HostJob(QObject* parent = nullptr) : QObject(parent) {}
  ~HostJob() override;

  // Starts `tokamak remote COMMAND --host HOST --tokamak TOKAMAK ARGS --json`; false while one runs. A missing
  // `tokamak` program is reported through finished().
  bool start(const QString& command, const QString& host, const QString& tokamak, const QStringList& args);
  // Starts `tokamak ARGS` as it is (the Slurm commands: `tokamak slurm info|submit|status|cancel ... --json`).
  bool startCommand(const QStringList& args);
  bool isRunning() const { return process_ != nullptr; }
  void cancel();

 Q_SIGNALS:
  void progress(const QString& what, qint64 done, qint64 total);
  // result: the last JSON object the command printed; error: "" on success, else its one line.
  void finished(const QJsonObject& result, const QString& error);

 private:
  void readLines();
  void ended(int exitCode, QProcess::ExitStatus status);

  QProcess* process_ = nullptr;
  QJsonObject last_;
  bool cancelled_ = false;
};

}  // namespace tokamak::ui
