// QueueDock's actions: adding (checked, all or none), moving, removing, pausing, and starting a worker through
// `tokamak queue resume` (see queue_dock.h).
#include "engine/base/run/run_launch.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/run_store.h"
#include "ui/queue/ladder_queue.h"
#include "ui/queue/queue_dock.h"
#include "ui/queue/queue_model.h"
#include "ui/common/child_process.h"
#include "ui/history/runs_io.h"

namespace tokamak::ui {
bool QueueDock::addConfigs(const QList<Config>& configs) {
  if (!ensureStore()) return false;
  if (configs.isEmpty()) return showMessage(tr("Nothing to queue."), true), false;
  std::vector<QueueItem> items;
  const int gpus = gpus_here();
  for (Config c : configs) {
    if (c.name.empty()) c.name = default_run_name(c);  // fixed now: the run's folder is known before it starts
    const std::vector<std::string> problems = config_problems(c, gpus);
    if (!problems.empty()) {
      showMessage(tr("%1 was not queued (nothing was): %2")
                      .arg(QString::fromStdString(c.name), QString::fromStdString(problems.front())),
                  true);
      return false;
    }
    QueueItem q;
    q.name = c.name, q.config_json = config_to_json(c, -1);
    items.push_back(q);
  }
  try {
    RunQueue queue(*store_);
    store_->transaction([&] {
      for (const QueueItem& q : items) queue.add(q);
    });
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  showMessage(tr("Queued %n run(s)", nullptr, int(items.size())) +
                  (paused_ ? tr(": the queue is paused, Resume queue starts them") : QString()),
              false);
  reload();
  startWorker();
  return true;
}

bool QueueDock::addCurrentSetup() {
  if (!setup_) return showMessage(tr("No setup to queue."), true), false;
  return addConfigs({setup_()});
}

bool QueueDock::queueLadder(const QString& path, const QList<qint64>& seeds) {
  QString error;
  const QList<Config> runs = ladderRuns(path, seeds, &error);
  if (runs.isEmpty()) return showMessage(error, true), false;
  return addConfigs(runs);
}

bool QueueDock::moveItem(qint64 id, int to) {
  if (!ensureStore()) return false;
  try {
    RunQueue(*store_).move(id, to);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  reload();
  selectItem(id);
  return true;
}

bool QueueDock::moveBy(qint64 id, int delta) {
  const int row = model_->rowOfId(id);
  if (row < 0) return showMessage(tr("Select a waiting run first."), true), false;
  const int index = model_->rows()[row].index;
  if (index < 0) return showMessage(tr("Only waiting runs move."), true), false;
  return moveItem(id, std::max(0, index + delta));
}

bool QueueDock::removeItem(qint64 id) {
  if (!ensureStore()) return false;
  try {
    RunQueue(*store_).remove(id);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  showMessage(tr("Removed queue item %1").arg(id), false);
  reload();
  return true;
}

bool QueueDock::setPaused(bool paused) {
  if (!ensureStore()) return false;
  try {
    RunQueue(*store_).set_paused(paused);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  showMessage(paused ? tr("Queue paused: runs going on go on; nothing new starts") : tr("Queue resumed"), false);
  reload();
  if (!paused) startWorker();
  return true;
}

bool QueueDock::setParallel(int runs) {
  if (!ensureStore()) return false;
  try {
    RunQueue(*store_).set_parallel(runs);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  showMessage(tr("Up to %n runs at once", nullptr, runs), false);
  reload();
  return true;
}

bool QueueDock::setGpusPerRun(int gpus) {
  if (!ensureStore()) return false;
  try {
    RunQueue(*store_).set_gpus_per_run(gpus);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return false;
  }
  showMessage(gpus == 0 ? tr("CUDA runs share every GPU") : tr("Each CUDA run gets %n GPUs of its own", nullptr, gpus),
              false);
  reload();
  return true;
}

bool QueueDock::runNow(qint64 id) {
  if (!moveItem(id, 0)) return false;
  return paused_ ? setPaused(false) : (startWorker(), true);
}

// `tokamak queue resume` starts a worker when none holds the store's lock (and the queue is not paused: it
// would find nothing to start). It runs for a moment: the worker itself is detached, in a session of its own.
void QueueDock::startWorker() {
  if (paused_ || !store_ || starter_) return;
  starter_ = new ChildProcess(this);
  connect(starter_, &ChildProcess::finished, this, [this](const QString& error) {
    if (!error.isEmpty()) showMessage(tr("The queue worker did not start: %1").arg(error), true);
    starter_->deleteLater();
    starter_ = nullptr;
    reload();
  });
  starter_->startTokamak({"queue", "resume", "--db", QString::fromStdString(store_->path())});
}

}  // namespace tokamak::ui
