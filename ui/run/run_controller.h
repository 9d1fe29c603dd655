// RunController: owns the studio's training run, which is a child `tokamak-engine train --json --control`
// process (QProcess). Its stdout is the JSON event stream (ui/run/json_events.h), fed into the EventBridge and
// handed on in batches from a ~30 ms single-shot timer, so plots redraw at most ~30 times a second whatever
// the step rate. Pause/Resume/Stop are lines on its stdin (app/tokamak/control_channel.h). The child records
// the run in the store itself; a child that dies without an end event ends the run here as "crashed" (killed
// by a signal) or "failed" (an error exit) with its last error line, and the store's row is marked crashed.
// A crash of LibTorch, CUDA or the OOM killer therefore never takes the window with it.
#pragma once
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "engine/config/config.h"
#include "engine/train/events.h"
#include "ui/run/event_bridge.h"

class QTemporaryFile;

namespace tokamak::ui {

class RunController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Stopping };
  Q_ENUM(State)

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  void setDatabase(const QString& path) { dbPath_ = path; }  // "" = the default run store
  // Where the next run trains: "" = this computer; else an SSH host (ui/remote/where_box.h), whose run is the
  // child `tokamak remote train --host HOST --tokamak TOKAMAK`: its stdout is the host's journal, so nothing
  // after the child knows where the run is.
  void setHost(const QString& host, const QString& tokamak = "tokamak") { host_ = host, hostTokamak_ = tokamak; }
  bool isRemote() const { return remote_; }            // the current (or last) run is on a host
  const QString& runHost() const { return runHost_; }  // that host and its tokamak command
  const QString& runTokamak() const { return runTokamak_; }
  // Starts the child; false when a run is still active. A child that cannot start ends at once as failed.
  bool start(const Config& config);
  // Follows a run that trains on a host (after a restart of the studio): `tokamak remote attach`; the whole
  // journal replays into the plots, and the store records only what it did not have. False while active.
  bool attach(const QString& host, const QString& tokamak, const QString& uid);
  // A host's run: ends only the reader here (stdin closed); the run goes on training on its host.
  void detach();
  // A host's run: asks it for a sample at its next step's end (`runs control UID sample` there); the text
  // arrives as the journal's next sample event. Nothing for a local run (SamplesPanel samples a checkpoint).
  void requestSample();
  void pause();
  void resume();
  void stop();
  // Ends the child now (SIGKILL, and its ranks with it): the escalation when a stop takes too long.
  void kill();
  // Stop, then wait up to graceMs for the child's clean end, then kill it. Blocks: for the destructor only.
  void stopAndWait(int graceMs = 30000);

  State state() const { return state_; }
  bool isActive() const { return state_ != State::Idle; }
  // Pause is not offered to data-parallel runs (the ranks agree only on stop).
  bool canPause() const { return state_ == State::Running && config_.dist.gpus <= 1; }
  const Config& config() const { return config_; }
  qint64 processId() const;  // the child's pid, 0 when none
  // What the last (or current) run reported.
  const RunStart& runStart() const { return start_; }
  const StepEvent& lastStep() const { return lastStep_; }
  const EndEvent& lastEnd() const { return end_; }
  bool hasEnded() const { return ended_; }
  QString lastCheckpoint() const { return lastCheckpoint_; }
  qint64 lastCheckpointStep() const { return lastCheckpointStep_; }
  EventBridge* bridge() { return &bridge_; }  // tests feed synthetic events through it

 Q_SIGNALS:
  void stateChanged(tokamak::ui::RunController::State state);
  void batchArrived(const tokamak::ui::RunBatch& batch);
  void runStarted(const tokamak::RunStart& start);
  void runEnded(const tokamak::EndEvent& end);
  // The store was told about a crashed run (after runEnded); the runs page may refresh.
  void storeChanged();
  // A run on a host: the connection dropped (connected false, with `tokamak remote`'s line) or is back.
  void connectionChanged(bool connected, const QString& note);

 private:
  bool launch(const QString& program, const QStringList& args);
  void resetRun();
  void send(const char* line);
  void readEvents();
  void readErrors();
  void processEnded(int exitCode, QProcess::ExitStatus status);
  void markCrashedInStore();
  void drain();
  void setState(State state);

  EventBridge bridge_;
  QTimer redraw_;
  QProcess* process_ = nullptr;
  QTemporaryFile* configFile_ = nullptr;
  QStringList stderrTail_;  // the child's last stderr lines, for the reason of a failure
  QString dbPath_;
  QString host_, hostTokamak_ = "tokamak", runHost_, runTokamak_;
  bool remote_ = false, disconnected_ = false, detaching_ = false;
  Config config_;
  RunStart start_;
  StepEvent lastStep_;
  EndEvent end_;
  bool ended_ = false;
  bool sawEnd_ = false;  // the child's own end event arrived
  QString lastCheckpoint_;
  qint64 lastCheckpointStep_ = 0;
  State state_ = State::Idle;
};

}  // namespace tokamak::ui
