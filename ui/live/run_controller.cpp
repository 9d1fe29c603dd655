// RunController: one run at a time, followed through its journal, events drained in batches (see
// run_controller.h).
#include "ui/live/run_controller.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QRegularExpression>
#include <QTemporaryFile>
#include <QThread>
#include <QThreadPool>
#include <csignal>
#include <sys/wait.h>
#include <cstring>
#include <exception>

#include "engine/base/run/events.h"
#include "engine/base/run/journal_events.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error_text.h"
#include "engine/base/util/files.h"
#include "ui/common/child_process.h"
#include "ui/common/programs.h"
#include "ui/live/run_start.h"
#include "ui/live/slurm_watch.h"

namespace tokamak::ui {
namespace {

// Forwards to the bridge and notes whether the child reported its own end.
class EndWatch : public EventSink {
 public:
  explicit EndWatch(bool* sawEnd) : sawEnd_(sawEnd) {}
  void on_end(const EndEvent&) override { *sawEnd_ = true; }

 private:
  bool* sawEnd_;
};

constexpr int kStderrLinesKept = 40;

}  // namespace

RunController::RunController(QObject* parent) : QObject(parent), slurm_(new SlurmWatch(this)) {
  connect(slurm_, &SlurmWatch::polled, this, &RunController::slurmPolled);
  connect(slurm_, &SlurmWatch::cancelFailed, this, [this](const QString& why) {
    Q_EMIT queueChanged(tr("Slurm job %1 was not cancelled: %2").arg(slurmJob_).arg(why));
  });
  // ~30 ms: fast enough to look live, slow enough that a redraw of 100k points never piles up (PlotJuggler).
  redraw_.setSingleShot(true);
  redraw_.setInterval(30);
  connect(&redraw_, &QTimer::timeout, this, &RunController::drain);
  connect(&bridge_, &EventBridge::pending, this, [this] {
    if (!redraw_.isActive()) redraw_.start();
  });
  reap_.setInterval(1000);
  connect(&reap_, &QTimer::timeout, this, &RunController::reapRuns);
}

void RunController::reapRuns() {
  for (auto it = launched_.begin(); it != launched_.end();)
    it = ::waitpid(static_cast<pid_t>(*it), nullptr, WNOHANG) != 0 ? launched_.erase(it) : it + 1;
  if (launched_.isEmpty()) reap_.stop();
}

RunController::~RunController() { stopAndWait(); }

// What a run leaves behind, cleared before the next one (started here or attached on a host).
void RunController::resetRun() {
  start_ = RunStart{};
  lastStep_ = StepEvent{};
  end_ = EndEvent{};
  ended_ = sawEnd_ = false;
  lastCheckpoint_.clear();
  lastCheckpointStep_ = 0;
  stderrTail_.clear();
  runUid_.clear(), runFolder_.clear();
  runPid_ = 0;
  disconnected_ = detaching_ = stopAsked_ = false;
  slurmJob_ = 0, readBytes_ = 0;
  heldEnd_.clear(), slurmNodes_.clear();
  slurmStepped_ = false;
  slurm_->watch({}, 0);
  bridge_.take();  // nothing of an earlier run may leak into this one
  Q_EMIT runReset();
}

bool RunController::start(const Config& config) {
  if (process_) return false;
  config_ = config;
  resetRun();

  remote_ = !host_.isEmpty();
  runHost_ = host_, runTokamak_ = hostTokamak_;
  const QString front = tokamakFrontPath(), engine = enginePath();
  if (front.isEmpty() || engine.isEmpty()) {
    failNow(engineMissingText());
    return true;  // ends at the next drain, like any failed run
  }
  if (!remote_) {
    // This computer: the run starts in a session of its own (it records itself in the store and writes its
    // journal), and is followed like a host's run from its folder.
    setState(State::Running);
    try {
      const StartedRun run = startLocalRun(config, engine, dbPath_);
      runUid_ = run.uid, runFolder_ = run.folder, runPid_ = run.pid;
    } catch (const std::exception& e) {
      // Ends from the event loop, as a run that fails later does: the caller's next lines come first.
      QMetaObject::invokeMethod(
          this, [this, why = QString::fromStdString(error_text(e))] { failNow(why); }, Qt::QueuedConnection);
      return true;
    }
    launched_ << runPid_;
    reap_.start();
    return launch(front, {"runs", "follow", runFolder_, "--control"});
  }
  // A host's run: started there detached, its journal followed over ssh and recorded in this store. The whole
  // effective config travels as a file: the run resolves it exactly as `tokamak train --config`.
  configFile_ = new QTemporaryFile(this);
  if (!configFile_->open()) {
    failNow(configFile_->errorString());
    return true;
  }
  configFile_->write(QByteArray::fromStdString(config_to_json(config)));
  configFile_->flush();
  QStringList args{
      "remote", "train", "--host", host_, "--tokamak", hostTokamak_, "--control", "--config", configFile_->fileName()};
  if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
  return launch(front, args);
}

// A run that ends before it has a reader: the reason goes through the bridge like any end.
void RunController::failNow(const QString& why) {
  bridge_.on_end({"failed", why.toStdString()});
  delete configFile_;
  configFile_ = nullptr;
  if (state_ != State::Idle) {
    drain();
    setState(State::Idle);
  }
}

bool RunController::launch(const QString& program, const QStringList& args) {
  process_ = new ChildProcess(this);
  process_->setReadJson(false);  // the journal's lines go through the engine's codec
  connect(process_, &ChildProcess::outputLine, this, &RunController::readLine);
  connect(process_, &ChildProcess::errorLine, this, &RunController::readError);
  connect(process_, &ChildProcess::finished, this, &RunController::processEnded);
  if (state_ == State::Idle) setState(State::Running);
  process_->start(program, args, "tokamak");
  return true;
}

bool RunController::attach(const QString& host, const QString& tokamak, const QString& uid) {
  if (process_) return false;
  config_ = Config{};
  resetRun();
  remote_ = !host.isEmpty();
  runHost_ = host, runTokamak_ = tokamak;
  const QString front = tokamakFrontPath();
  if (front.isEmpty()) {
    bridge_.on_end({"failed", engineMissingText().toStdString()});
    return true;
  }
  if (remote_) {
    runUid_ = uid;
    QStringList args{"remote", "attach", "--host", host, "--tokamak", tokamak, "--control", uid};
    if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
    return launch(front, args);
  }
  try {
    const RunFolder f = find_run_folder(uid.toStdString());
    runFolder_ = QString::fromStdString(f.path);
    runUid_ = QString::fromStdString(read_run_folder_info(f).uid);
    runPid_ = read_pid(f);
    // A detached run keeps its config: Pause is offered as for a run started here, Resume continues it.
    if (path_exists(f.path + "/config.json")) config_ = config_from_json(read_file(f.path + "/config.json"));
  } catch (const std::exception& e) {
    bridge_.on_end({"failed", e.what()});
    return true;
  }
  return launch(front, {"runs", "follow", runFolder_, "--control"});
}

qint64 RunController::processId() const {
  if (!remote_) return runPid_;
  return process_ ? process_->processId() : 0;
}

qint64 RunController::readerPid() const { return process_ ? process_->processId() : 0; }

void RunController::send(const char* line) {
  if (process_) process_->write(QByteArray(line) + '\n');
}

void RunController::pause() {
  if (!canPause()) return;
  send("pause");
  setState(State::Paused);
}

void RunController::resume() {
  if (state_ != State::Paused) return;
  send("resume");
  setState(State::Running);
}

void RunController::sampleNow() {
  if (state_ == State::Running || state_ == State::Paused) send("sample");
}

void RunController::stop() {
  if (state_ == State::Idle || state_ == State::Stopping) return;
  stopAsked_ = true;  // a run still being started gets it as soon as its reader is there
  if (slurmJob_ > 0) {
    // scancel: every rank gets SIGTERM, rank 0 writes a checkpoint and ends the run stopped (a job still in
    // the queue just leaves it: the watch then ends the run here).
    slurm_->cancelJob();
    slurm_->pollSoon();
    return setState(State::Stopping);
  }
  // The trainer finishes its step, writes a checkpoint and ends as "stopped"; stop also ends a pause.
  send("stop");
  setState(State::Stopping);
}

void RunController::detach() {
  if (!process_) return;
  detaching_ = true;
  // `tokamak runs follow --control` and `tokamak remote` take the end of stdin as "the reader went away".
  process_->closeInput();
}

void RunController::requestSample() {
  if (remote_ && state_ != State::Idle) send("sample");  // `tokamak remote --control` sends it to the host
}

void RunController::kill() {
  // A local run is nobody's child: its process is killed by pid (the pid file's start time guards against a
  // reused pid); a launcher's ranks die with it (PR_SET_PDEATHSIG), and the reader then reports the crash.
  if (!remote_ && runPid_ > 0 && run_process_alive(RunFolder{runFolder_.toStdString()}))
    ::kill(static_cast<pid_t>(runPid_), SIGKILL);
  else if (process_) process_->kill();
}

void RunController::stopAndWait(int graceMs) {
  QPointer<ChildProcess> p = process_;
  if (!p) return;
  // A host's run, and a Slurm job's, outlive the studio: closing stdin ends only the reader here.
  if (remote_ || slurmJob_ > 0) detach();
  else stop();
  if (!p->waitForFinished(graceMs) && p) {
    kill();
    if (p && !p->waitForFinished(5000) && p) p->kill(), p->waitForFinished(5000);
  }
  if (process_) {  // not even SIGKILL was seen to end it
    readerCrashed_ = true;
    processEnded();
  }
  reapRuns();
}

void RunController::readLine(const QByteArray& raw) {
  if (!process_) return;
  FanOutSink sinks;
  EndWatch watch(&sawEnd_);
  sinks.add(&watch);
  sinks.add(&bridge_);
  readBytes_ += static_cast<quint64>(raw.size());  // the journal's bytes: the readers print its lines as they are
  const QByteArray line = raw.trimmed();
  if (line.isEmpty() || (slurmJob_ > 0 && holdSlurmLine(line))) return;
  // The engine's one codec (the store's ingest reads the journal with it too); a line that is no event is a
  // message of the reader's, kept for the reason of a failure.
  if (dispatch_journal_line(line.toStdString(), sinks).empty()) stderrTail_ << QString::fromUtf8(line);
  if (disconnected_) {
    disconnected_ = false;
    Q_EMIT connectionChanged(true, {});
  }
}

void RunController::readError(const QString& l) {
  if (!process_) return;
  // `tokamak remote`'s notes: a dropped connection (it retries with back-off) is not the run's error.
  if (remote_ && l.startsWith("tokamak remote: disconnected")) {
    disconnected_ = true;
    return Q_EMIT connectionChanged(false, l.mid(16));
  }
  stderrTail_ << l;
  while (stderrTail_.size() > kStderrLinesKept) stderrTail_.removeFirst();
}

void RunController::processEnded() {
  if (!process_) return;
  reapRuns();  // a local run that ended is a zombie until then, and the store takes a zombie for alive
  const int exitCode = process_->exitCode();
  const bool crashed = process_->crashed() || readerCrashed_;
  readerCrashed_ = false;
  // A reader that never ran (no exit code of its own): its one line is the reason.
  if (!crashed && exitCode == -1) stderrTail_ << "tokamak: " + process_->error();
  if (slurmJob_ > 0 && slurmReaderEnded()) return;  // the job's state decides what comes next
  if (!sawEnd_ && !detaching_) {
    // Killed (SIGKILL, the OOM killer, an abort) or an error exit before or without the end event.
    EndEvent e;
    QString why = errorLineOf(stderrTail_, /*orLastLine=*/!crashed);
    if (crashed) {
      e.status = "crashed";
      const QString signal =
          exitCode > 0 ? QString(" by signal %1 (%2)").arg(exitCode).arg(strsignal(exitCode)) : QString();
      why = tr("the run's reader was killed%1").arg(signal) + (why.isEmpty() ? QString() : ": " + why);
    } else {
      // The reader's verdict on a run whose process ended without an end event (`runs follow`, run_folder.h).
      e.status = why.contains("crashed (it ended without an end event)") ? "crashed" : "failed";
      if (why.isEmpty()) why = tr("the engine process ended (exit code %1) without ending the run").arg(exitCode);
    }
    e.error = why.toStdString();
    e.step = lastStep_.step, e.tokens = lastStep_.tokens, e.wall_s = lastStep_.wall_s;
    bridge_.on_end(e);
    if (!start_.run_uid.empty()) markCrashedInStore();
  }
  process_->disconnect(this);
  process_->deleteLater();
  process_ = nullptr;
  finishReader();
}

// The run has ended and its reader is gone.
void RunController::finishReader() {
  delete configFile_;
  configFile_ = nullptr;
  drain();  // the end event is in the bridge now
  setState(State::Idle);
}

void RunController::markCrashedInStore() {
  // Opening the store marks runs whose process is gone as crashed. Off the GUI thread; a few tries, because
  // after a launcher is killed its ranks take a moment to follow it.
  const std::string db = dbPath_.toStdString(), uid = start_.run_uid;
  QPointer<RunController> self = this;
  QThreadPool::globalInstance()->start([db, uid, self] {
    try {
      for (int i = 0; i < 10; ++i) {
        RunStore store(db);  // opening marks the dead runs
        const int64_t id = uid.empty() ? 0 : store.find_uid(uid);
        if (id == 0 || store.run(id).status != "running") break;
        QThread::msleep(300);
      }
    } catch (...) {
      // A store that cannot be opened (whatever it throws; a pool thread that throws ends the studio): the runs page
      // reports that itself.
    }
    QMetaObject::invokeMethod(qApp, [self] {
      if (self) Q_EMIT self->storeChanged();
    });
  });
}

void RunController::drain() {
  redraw_.stop();
  RunBatch batch = bridge_.take();
  if (batch.empty()) return;
  if (batch.start) start_ = *batch.start;
  if (batch.start && runUid_.isEmpty()) runUid_ = QString::fromStdString(start_.run_uid);  // a host's new run
  if (!batch.steps.empty()) lastStep_ = batch.steps.back();
  if (!batch.checkpoints.empty()) {
    lastCheckpoint_ = QString::fromStdString(batch.checkpoints.back().path);
    lastCheckpointStep_ = batch.checkpoints.back().step;
  }
  if (batch.start) Q_EMIT runStarted(start_);
  Q_EMIT batchArrived(batch);
  if (batch.end) {
    end_ = *batch.end;
    ended_ = true;
    Q_EMIT runEnded(end_);
  }
}

void RunController::setState(State state) {
  if (state_ == state) return;
  state_ = state;
  Q_EMIT stateChanged(state);
}

}  // namespace tokamak::ui
