// RunController: owns the training thread of the studio. Start/pause/resume/stop map onto TrainControl's
// flags; events come from the EventBridge and are handed on in batches from a ~30 ms single-shot timer, so
// plots and panels redraw at most ~30 times a second whatever the step rate. The thread is shut down the
// Qt way: stop flag, requestInterruption → quit → wait.
#pragma once
#include <QObject>
#include <QString>
#include <QTimer>
#include <memory>

#include "engine/config/config.h"
#include "engine/train/events.h"
#include "ui/run/event_bridge.h"

class QThread;

namespace tokamak {
struct TrainControl;
}

namespace tokamak::ui {

class RunController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Running, Paused, Stopping };
  Q_ENUM(State)

  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  void setDatabase(const QString& path) { dbPath_ = path; }  // "" = the default run store
  // Starts a run on a new thread; false when one is still running.
  bool start(const Config& config);
  void pause();
  void resume();
  void stop();
  // Stops the run and blocks until its thread has ended (closing the window).
  void stopAndWait();

  State state() const { return state_; }
  bool isActive() const { return state_ != State::Idle; }
  const Config& config() const { return config_; }
  // What the last (or current) run reported.
  const RunStart& runStart() const { return start_; }
  const StepEvent& lastStep() const { return lastStep_; }
  const EndEvent& lastEnd() const { return end_; }
  bool hasEnded() const { return ended_; }
  QString lastCheckpoint() const { return lastCheckpoint_; }
  EventBridge* bridge() { return &bridge_; }  // tests feed synthetic events through it

 Q_SIGNALS:
  void stateChanged(tokamak::ui::RunController::State state);
  void batchArrived(const tokamak::ui::RunBatch& batch);
  void runStarted(const tokamak::RunStart& start);
  void runEnded(const tokamak::EndEvent& end);

 private:
  void drain();
  void setState(State state);
  void threadFinished();

  EventBridge bridge_;
  QTimer redraw_;
  QThread* thread_ = nullptr;
  std::unique_ptr<TrainControl> control_;
  QString dbPath_;
  Config config_;
  RunStart start_;
  StepEvent lastStep_;
  EndEvent end_;
  bool ended_ = false;
  QString lastCheckpoint_;
  State state_ = State::Idle;
};

}  // namespace tokamak::ui
