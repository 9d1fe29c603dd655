// QueueDock: this computer's queue of runs in the studio (docs/SWEEPS.md). The queue is rows of the run store
// worked by a detached worker (engine/fleet/queue/queue_worker.h), so it goes on when the studio closes or dies and
// the next studio shows it. The dock reads the store on a timer (a cheap PRAGMA data_version when nothing
// changed) and writes through the same RunQueue calls as `tokamak queue move|remove|pause`; a worker is
// started as `tokamak queue resume` does it, by that command in a child (the worker must be the front
// program: it starts the runs). Every button ends in a public method below, so tests drive it without clicks.
#pragma once
#include <QDockWidget>
#include <QList>
#include <QSet>
#include <QString>
#include <functional>
#include <memory>

#include "engine/base/config/config.h"

namespace tokamak {
class RunStore;
}
class QLabel;
class QSpinBox;
class QTableView;
class QTimer;
class QToolButton;

namespace tokamak::ui {

class ChildProcess;

class QueueModel;

class QueueDock : public QDockWidget {
  Q_OBJECT
 public:
  explicit QueueDock(QWidget* parent = nullptr);
  ~QueueDock() override;

  void setDatabase(const QString& path);  // "" = the default run store
  // Where "Add current setup" takes its config from (the setup panel).
  void setSetupSource(std::function<Config()> setup) { setup_ = std::move(setup); }

  // --- what the buttons do; false with the reason in message() when refused ---
  bool refresh();  // reads the queue now
  // Checks every config (config_problems), fixes each run's name, then queues them all in one transaction
  // (all or none) and starts a worker unless the queue is paused.
  bool addConfigs(const QList<Config>& configs);
  bool addCurrentSetup();
  bool moveItem(qint64 id, int to);  // to = its new place among the waiting runs (0 = next)
  bool moveBy(qint64 id, int delta);
  bool removeItem(qint64 id);
  bool setPaused(bool paused);
  // How many runs the worker keeps going at once, and how many GPUs of its own each `cuda` run gets (0 = they
  // share every GPU): RunQueue::set_parallel / set_gpus_per_run, read by the worker at every pass.
  bool setParallel(int runs);
  bool setGpusPerRun(int gpus);
  // Puts a waiting run at the head and lets the queue work (resumes it, starts a worker if none).
  bool runNow(qint64 id);
  // Every rung of a ladder file (engine/base/config/ladder.h) once per seed (train.seed), named as `tokamak bench`
  // names them ("LADDER/RUNG", "-sSEED" when there are several seeds).
  bool queueLadder(const QString& path, const QList<qint64>& seeds);

  bool paused() const { return paused_; }
  qint64 workerPid() const { return workerPid_; }
  QString message() const;
  qint64 selectedId() const;  // 0 when none
  void selectItem(qint64 id);
  QueueModel* model() const { return model_; }
  QTableView* view() const { return view_; }

 Q_SIGNALS:
  void followRequested(const QString& runUid);  // double-click or Follow on a running item
  void runStarted(const QString& runUid);       // a run this dock saw waiting has started (its folder is there)
  void compareLadderRequested(const QString& ladder);

 private:
  void buildTable();
  void buildButtons();
  bool ensureStore();
  void poll();
  void reload();
  void announceStarts();
  void startWorker();
  void showMessage(const QString& text, bool error);
  void updateActions();

  std::unique_ptr<tokamak::RunStore> store_;
  bool opened_ = false;
  qint64 dataVersion_ = -1;
  bool paused_ = false;
  qint64 workerPid_ = 0;
  std::function<Config()> setup_;
  QSet<qint64> seenWaiting_;  // ids seen queued: their start is announced once
  QSet<qint64> announced_;

  QueueModel* model_;
  QTableView* view_;
  QLabel* message_;
  QTimer* poll_;
  ChildProcess* starter_ = nullptr;  // `tokamak queue resume`, starting a worker
  QToolButton *add_, *runNow_, *up_, *down_, *remove_, *pause_, *follow_, *compare_;
  QSpinBox *parallel_, *gpusPerRun_;
};

}  // namespace tokamak::ui
