// EngineJob: one `tokamak-engine` command in a child process that is not a training run — exporting a model,
// evaluating a checkpoint — so the window stays responsive while it works and a crash in it cannot take the
// studio. It reports the child's stdout on success, or the line of its stderr that says why it failed.
#pragma once
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace tokamak::ui {

class EngineJob : public QObject {
  Q_OBJECT
 public:
  explicit EngineJob(QObject* parent = nullptr) : QObject(parent) {}
  ~EngineJob() override;

  // Starts `tokamak-engine args`; false (and nothing started) while another job of this object runs. A missing
  // engine is reported through finished().
  bool start(const QStringList& args);
  bool isRunning() const { return process_ != nullptr; }
  void cancel();  // kills the child; finished() reports "cancelled"

 Q_SIGNALS:
  // error is "" on success; output is the child's stdout either way.
  void finished(const QString& output, const QString& error);

 private:
  void ended(int exitCode, QProcess::ExitStatus status);

  QProcess* process_ = nullptr;
  bool cancelled_ = false;
};

}  // namespace tokamak::ui
