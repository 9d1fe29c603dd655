// RunController: one child engine process at a time, events drained in batches (see run_controller.h).
#include "ui/run/run_controller.h"

#include <QCoreApplication>
#include <QPointer>
#include <QRegularExpression>
#include <QTemporaryFile>
#include <QThread>
#include <QThreadPool>
#include <cstring>
#include <exception>

#include "engine/store/run_store.h"
#include "engine/train/trainer.h"
#include "ui/run/engine_process.h"
#include "ui/run/json_events.h"

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

RunController::RunController(QObject* parent) : QObject(parent) {
  // ~30 ms: fast enough to look live, slow enough that a redraw of 100k points never piles up (PlotJuggler).
  redraw_.setSingleShot(true);
  redraw_.setInterval(30);
  connect(&redraw_, &QTimer::timeout, this, &RunController::drain);
  connect(&bridge_, &EventBridge::pending, this, [this] {
    if (!redraw_.isActive()) redraw_.start();
  });
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
  bridge_.take();  // nothing of an earlier run may leak into this one
}

bool RunController::start(const Config& config) {
  if (process_) return false;
  config_ = config;
  resetRun();

  remote_ = !host_.isEmpty(), disconnected_ = detaching_ = false;
  runHost_ = host_, runTokamak_ = hostTokamak_;
  const QString engine = remote_ ? tokamakFrontPath() : enginePath();
  configFile_ = new QTemporaryFile(this);
  if (engine.isEmpty() || !configFile_->open()) {
    bridge_.on_end({"failed", (engine.isEmpty() ? engineMissingText() : configFile_->errorString()).toStdString()});
    delete configFile_;
    configFile_ = nullptr;
    return true;  // ends at the next drain, like any failed run
  }
  // The whole effective config travels as a file: the child resolves it exactly as `tokamak train --config`.
  configFile_->write(QByteArray::fromStdString(config_to_json(config)));
  configFile_->flush();
  QStringList args{"train", "--json", "--control", "--config", configFile_->fileName()};
  // A host's run: started there detached, its journal followed over ssh and recorded in this store.
  if (remote_)
    args = {"remote",    "train",     "--host",
            host_,       "--tokamak", hostTokamak_,
            "--control", "--config",  configFile_->fileName()};
  if (!dbPath_.isEmpty()) args << "--db" << dbPath_;

  return launch(engine, args);
}

bool RunController::launch(const QString& program, const QStringList& args) {
  process_ = new QProcess(this);
  process_->setProgram(program);
  process_->setArguments(args);
  connect(process_, &QProcess::readyReadStandardOutput, this, &RunController::readEvents);
  connect(process_, &QProcess::readyReadStandardError, this, &RunController::readErrors);
  connect(process_, &QProcess::finished, this, &RunController::processEnded);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || !process_) return;
    stderrTail_ << "tokamak: could not start " + process_->program() + ": " + process_->errorString();
    processEnded(-1, QProcess::NormalExit);
  });
  setState(State::Running);
  process_->start();
  return true;
}

bool RunController::attach(const QString& host, const QString& tokamak, const QString& uid) {
  if (process_) return false;
  config_ = Config{};
  resetRun();
  remote_ = true, disconnected_ = detaching_ = false;
  runHost_ = host, runTokamak_ = tokamak;
  const QString front = tokamakFrontPath();
  if (front.isEmpty()) {
    bridge_.on_end({"failed", engineMissingText().toStdString()});
    return true;
  }
  QStringList args{"remote", "attach", "--host", host, "--tokamak", tokamak, "--control", uid};
  if (!dbPath_.isEmpty()) args << "--db" << dbPath_;
  return launch(front, args);
}

qint64 RunController::processId() const { return process_ ? process_->processId() : 0; }

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

void RunController::stop() {
  if (!process_ || state_ == State::Stopping) return;
  // The trainer finishes its step, writes a checkpoint and ends as "stopped"; stop also ends a pause.
  send("stop");
  setState(State::Stopping);
}

void RunController::detach() {
  if (!process_ || !remote_) return;
  detaching_ = true;
  process_->closeWriteChannel();  // `tokamak remote` takes the end of stdin as "the reader went away"
}

void RunController::requestSample() {
  if (remote_ && state_ != State::Idle) send("sample");  // `tokamak remote --control` sends it to the host
}

void RunController::kill() {
  if (process_) process_->kill();  // the launcher's ranks die with it (PR_SET_PDEATHSIG)
}

void RunController::stopAndWait(int graceMs) {
  QPointer<QProcess> p = process_;
  if (!p) return;
  // A host's run outlives the studio: closing stdin ends only the reader here (cmd_remote.cpp).
  if (remote_) detach();
  else stop();
  if (!p->waitForFinished(graceMs) && p) {
    p->kill();
    p->waitForFinished(5000);
  }
  if (process_) processEnded(-1, QProcess::CrashExit);  // not even SIGKILL was seen to end it
}

void RunController::readEvents() {
  if (!process_) return;
  FanOutSink sinks;
  EndWatch watch(&sawEnd_);
  sinks.add(&watch);
  sinks.add(&bridge_);
  bool any = false;
  while (process_->canReadLine()) {
    const QByteArray line = process_->readLine().trimmed();
    if (!line.isEmpty() && !dispatchJsonEvent(line, sinks)) stderrTail_ << QString::fromUtf8(line);
    any = any || !line.isEmpty();
  }
  if (any && disconnected_) {
    disconnected_ = false;
    Q_EMIT connectionChanged(true, {});
  }
}

void RunController::readErrors() {
  if (!process_) return;
  // Progress bars redraw with \r: each piece is a line of its own.
  const QString text = QString::fromUtf8(process_->readAllStandardError());
  for (const QString& l : text.split(QRegularExpression("[\r\n]"), Qt::SkipEmptyParts)) {
    // `tokamak remote`'s notes: a dropped connection (it retries with back-off) is not the run's error.
    if (remote_ && l.startsWith("tokamak remote: disconnected")) {
      disconnected_ = true;
      Q_EMIT connectionChanged(false, l.mid(16));
      continue;
    }
    stderrTail_ << l;
  }
  while (stderrTail_.size() > kStderrLinesKept) stderrTail_.removeFirst();
}

void RunController::processEnded(int exitCode, QProcess::ExitStatus status) {
  if (!process_) return;
  readEvents();
  readErrors();
  if (!sawEnd_ && !detaching_) {
    // Killed (SIGKILL, the OOM killer, an abort) or an error exit before or without the end event.
    EndEvent e;
    QString why = errorLineOf(stderrTail_, /*orLastLine=*/status != QProcess::CrashExit);
    if (status == QProcess::CrashExit) {
      e.status = "crashed";
      const QString signal =
          exitCode > 0 ? QString(" by signal %1 (%2)").arg(exitCode).arg(strsignal(exitCode)) : QString();
      why = tr("the engine process was killed%1").arg(signal) + (why.isEmpty() ? QString() : ": " + why);
    } else {
      e.status = "failed";
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
    } catch (const std::exception&) {
      // A store that cannot be opened: the runs page reports that itself.
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
