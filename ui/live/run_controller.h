// RunController: the studio's training run, seen through its journal (docs/ARCHITECTURE.md, "One event path").
// Every run is started detached where it trains and followed by a reader child whose stdout is the run's
// journal from a byte offset and whose stdin takes pause/resume/stop/sample lines:
//   this computer: started here as the queue worker starts a run (run_start.h: its folder, config.json and
//                  tokamak-engine in a session of its own), then `tokamak runs follow FOLDER --control`;
//   an SSH host:   `tokamak remote train|attach --host HOST --control` (which also records it in the store).
// The lines go into the EventBridge and are handed on in batches from a ~30 ms single-shot timer, so plots
// redraw at most ~30 times a second whatever the step rate. A local run records itself in the store (its own
// StoreSink); a host's run is recorded by its reader. Since the run is nobody's child, it outlives a closed or
// killed studio, and the next studio re-attaches (attach(), ui/live/live_runs.h). A run that ends without an
// end event ends here as "crashed" with the last error line its reader reports, and the store's row is marked
// crashed. A crash of LibTorch, CUDA or the OOM killer therefore never takes the window with it.
#pragma once
#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include "engine/base/config/config.h"
#include "engine/base/run/events.h"
#include "ui/live/event_bridge.h"

class QTemporaryFile;

namespace tokamak::ui {

class ChildProcess;
class SlurmWatch;

class RunController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Stopping };
  Q_ENUM(State)

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  void setDatabase(const QString& path) { dbPath_ = path; }  // "" = the default run store
  // Where the next run trains: "" = this computer; else an SSH host (ui/remote/where_box.h), whose reader is
  // the child `tokamak remote train --host HOST --tokamak TOKAMAK`: its stdout is the host's journal, as a local
  // run's reader's is the local journal, so nothing after the reader knows where the run is.
  void setHost(const QString& host, const QString& tokamak = "tokamak") { host_ = host, hostTokamak_ = tokamak; }
  bool isRemote() const { return remote_; }            // the current (or last) run is on a host
  const QString& runHost() const { return runHost_; }  // that host and its tokamak command
  const QString& runTokamak() const { return runTokamak_; }
  // Starts the run detached and follows it; false when a run is still active. A run that cannot start ends at
  // once as failed.
  bool start(const Config& config);
  // Follows a live run again (after a restart of the studio, or picked among several): host "" = this
  // computer (uid: the run's uid or its folder), else `tokamak remote attach`. The whole journal replays into
  // the plots; the store records only what it did not have. False while active.
  bool attach(const QString& host, const QString& tokamak, const QString& uid);
  // Follows the run of a job `tokamak slurm submit` has queued (ui/remote/slurm_dialog.h): host "" = this
  // computer (its run folder), else the login node (`tokamak remote attach`). Until the first step the
  // status of the job is polled and reported by queueChanged (pending and why, running on which nodes); Stop
  // is `tokamak slurm cancel`. A requeue keeps the run: the journal's `end` (stopped) is held while the job is
  // still in Slurm's queue, the reader follows again from the byte it had reached, and the next `start` is
  // reported by requeued (a gap in the curves), not as a new run. False while a run is active.
  bool followSlurmJob(const QString& host, const QString& tokamak, qint64 job, const QString& uid,
                      const QString& folder, const Config& config);
  qint64 slurmJob() const { return slurmJob_; }  // 0 = the run is not a Slurm job
  // Ends only the reader here (its stdin closed); the run goes on training, to be attached again.
  void detach();
  // A host's run: asks it for a sample at its next step's end (`runs control UID sample` there); the text
  // arrives as the journal's next sample event. Nothing for a local run (SamplesPanel samples a checkpoint).
  void requestSample();
  void pause();
  void resume();
  void stop();
  void sampleNow();  // a sample at the run's next step's end (`runs control UID sample`)
  // Ends the run now (SIGKILL of a local run's process, its ranks with it; a host's run: only the reader):
  // the escalation when a stop takes too long.
  void kill();
  // Stop, then wait up to graceMs for the run's clean end, then kill it; a host's run is only detached.
  // Blocks: for the destructor only.
  void stopAndWait(int graceMs = 30000);

  State state() const { return state_; }
  bool isActive() const { return state_ != State::Idle; }
  // Pause is not offered to data-parallel runs (the ranks agree only on stop).
  // Nor to Slurm jobs: a paused job would hold its allocation.
  bool canPause() const { return state_ == State::Running && config_.dist.gpus <= 1 && slurmJob_ == 0; }
  const Config& config() const { return config_; }
  qint64 processId() const;  // a local run's own process (the launcher of a data-parallel one); 0 for a host's
  qint64 readerPid() const;  // the reader child's pid (runs follow / remote), 0 when none
  const QString& runUid() const { return runUid_; }  // known once started (before its start event)
  // What the last (or current) run reported.
  const RunStart& runStart() const { return start_; }
  const StepEvent& lastStep() const { return lastStep_; }
  const EndEvent& lastEnd() const { return end_; }
  bool hasEnded() const { return ended_; }
  QString lastCheckpoint() const { return lastCheckpoint_; }
  qint64 lastCheckpointStep() const { return lastCheckpointStep_; }
  EventBridge* bridge() { return &bridge_; }  // tests feed synthetic events through it

 Q_SIGNALS:
  // A run is about to be followed (started, resumed, attached): what the last one reported is gone. Its
  // dataset warnings may come before its start event, so this, not runStarted, is where a view clears.
  void runReset();
  void stateChanged(tokamak::ui::RunController::State state);
  void batchArrived(const tokamak::ui::RunBatch& batch);
  void runStarted(const tokamak::RunStart& start);
  void runEnded(const tokamak::EndEvent& end);
  // The store was told about a crashed run (after runEnded); the runs page may refresh.
  void storeChanged();
  // A run on a host: the connection dropped (connected false, with `tokamak remote`'s line) or is back.
  void connectionChanged(bool connected, const QString& note);
  // A Slurm job's state before its run's first step ("Slurm job 7: pending: PartitionDown (its partition is
  // down)"), then "running (Slurm job 7 on n[1-2])".
  void queueChanged(const QString& text);
  // A requeued job's run started again: its earlier steps end at `step`, the next ones follow after a gap.
  void requeued(qint64 step);

 private:
  bool launch(const QString& program, const QStringList& args);
  void failNow(const QString& why);
  void reapRuns();
  void resetRun();
  void send(const char* line);
  void readLine(const QByteArray& raw);
  void readError(const QString& line);
  void processEnded();
  void markCrashedInStore();
  void drain();
  void setState(State state);
  void finishReader();
  // Slurm (run_controller_slurm.cpp)
  bool holdSlurmLine(const QByteArray& line);
  bool slurmReaderEnded();
  void slurmPolled(const QJsonObject& status, const QString& error);
  void launchSlurmReader();
  void showRunning();

  EventBridge bridge_;
  QTimer redraw_;
  ChildProcess* process_ = nullptr;       // the reader
  bool readerCrashed_ = false;            // stopAndWait gave up on it
  QTemporaryFile* configFile_ = nullptr;  // a host's run: the config `tokamak remote train` sends
  // The local runs this studio started are its children until they end: reaped, so that none stays a zombie.
  QList<qint64> launched_;
  QTimer reap_;
  QStringList stderrTail_;  // the child's last stderr lines, for the reason of a failure
  QString dbPath_;
  QString host_, hostTokamak_ = "tokamak", runHost_, runTokamak_;
  bool remote_ = false, disconnected_ = false, detaching_ = false, stopAsked_ = false;
  QString runUid_, runFolder_;  // a local run's uid and folder
  qint64 runPid_ = 0;           // a local run's process
  Config config_;
  RunStart start_;
  StepEvent lastStep_;
  EndEvent end_;
  bool ended_ = false;
  bool sawEnd_ = false;  // the child's own end event arrived
  QString lastCheckpoint_;
  qint64 lastCheckpointStep_ = 0;
  State state_ = State::Idle;
  // A Slurm job's run
  SlurmWatch* slurm_;
  qint64 slurmJob_ = 0;
  quint64 readBytes_ = 0;      // journal bytes the readers have printed: where a new reader goes on from
  QByteArray heldEnd_;         // an `end` (stopped) held while the job may still be requeued
  bool slurmStepped_ = false;  // a step since the (last) start: the queue state is no longer shown
  QString slurmNodes_;
};

}  // namespace tokamak::ui
