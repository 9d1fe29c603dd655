// RunController: one training thread at a time, events drained in batches (see run_controller.h).
#include "ui/run/run_controller.h"

#include <QThread>

#include "engine/train/trainer.h"
#include "ui/run/train_worker.h"

namespace tokamak::ui {

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

bool RunController::start(const Config& config) {
  if (thread_) return false;
  config_ = config;
  control_ = std::make_unique<TrainControl>();
  start_ = RunStart{};
  lastStep_ = StepEvent{};
  end_ = EndEvent{};
  ended_ = false;
  lastCheckpoint_.clear();
  bridge_.take();  // nothing of an earlier run may leak into this one

  thread_ = new QThread(this);
  auto* worker = new TrainWorker(config, dbPath_.toStdString(), &bridge_, control_.get());
  worker->moveToThread(thread_);
  connect(thread_, &QThread::started, worker, &TrainWorker::run);
  connect(worker, &TrainWorker::finished, thread_, &QThread::quit);
  connect(thread_, &QThread::finished, worker, &QObject::deleteLater);
  // Queued from the ending thread; stopAndWait() may have cleaned up (or a new run started) meanwhile.
  connect(thread_, &QThread::finished, this, [this, t = thread_] {
    if (thread_ == t) threadFinished();
  });
  setState(State::Running);
  thread_->start();
  return true;
}

void RunController::pause() {
  if (state_ != State::Running) return;
  control_->pause = true;
  setState(State::Paused);
}

void RunController::resume() {
  if (state_ != State::Paused) return;
  control_->pause = false;
  setState(State::Running);
}

void RunController::stop() {
  if (!thread_ || state_ == State::Stopping) return;
  // The trainer finishes its step, writes a checkpoint and ends as "stopped"; pause is cleared by stop.
  control_->stop = true;
  thread_->requestInterruption();
  setState(State::Stopping);
}

void RunController::stopAndWait() {
  if (!thread_) return;
  stop();
  thread_->quit();  // takes effect once the worker's run() has returned
  thread_->wait();
  threadFinished();
}

void RunController::threadFinished() {
  if (!thread_) return;
  drain();  // the end event may still sit in the bridge
  thread_->deleteLater();
  thread_ = nullptr;
  setState(State::Idle);
}

void RunController::drain() {
  redraw_.stop();
  RunBatch batch = bridge_.take();
  if (batch.empty()) return;
  if (batch.start) start_ = *batch.start;
  if (!batch.steps.empty()) lastStep_ = batch.steps.back();
  if (!batch.checkpoints.empty()) lastCheckpoint_ = QString::fromStdString(batch.checkpoints.back().path);
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
