// QueueDock: the queue's table, its buttons, the poll and the worker's start (see queue_dock.h).
#include "ui/queue/queue_dock.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QTimer>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "engine/fleet/queue/queue_worker.h"
#include "engine/base/run/run_folder.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/files.h"
#include "ui/common/child_process.h"
#include "ui/queue/ladder_queue.h"
#include "ui/queue/queue_model.h"
#include "ui/history/runs_io.h"

namespace tokamak::ui {

QueueDock::QueueDock(QWidget* parent) : QDockWidget(tr("Queue"), parent) {
  setObjectName("queueDock");
  buildTable();
  buildButtons();

  parallel_ = new QSpinBox;
  parallel_->setObjectName("queueParallel");
  parallel_->setRange(1, 64);
  parallel_->setPrefix(tr("at once: "));
  parallel_->setToolTip(
      tr("How many queued runs train at the same time on this computer (1 by default). On a "
         "machine with several GPUs, one per GPU with \"GPUs each\" at 1"));
  gpusPerRun_ = new QSpinBox;
  gpusPerRun_->setObjectName("queueGpusPerRun");
  gpusPerRun_->setRange(0, 64);
  gpusPerRun_->setPrefix(tr("GPUs each: "));
  gpusPerRun_->setSpecialValueText(tr("GPUs each: shared"));
  gpusPerRun_->setToolTip(
      tr("GPUs of its own for each CUDA run (CUDA_VISIBLE_DEVICES from the free ones; a run of "
         "dist.gpus N takes N). 0: every run sees every GPU. CPU runs take none"));
  connect(parallel_, &QSpinBox::valueChanged, this, [this](int n) { setParallel(n); });
  connect(gpusPerRun_, &QSpinBox::valueChanged, this, [this](int n) { setGpusPerRun(n); });

  message_ = new QLabel;
  message_->setObjectName("queueMessage");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  // A tool bar, not a row of buttons: narrower than its buttons it folds the last ones into its » menu, so the
  // dock never widens the window's bottom area (and with it squeezes the setup dock's two columns).
  auto* bar = new QToolBar;
  bar->setObjectName("queueToolBar");
  bar->setIconSize(QSize(16, 16));
  for (QToolButton* b : {add_, runNow_, up_, down_, remove_, pause_, follow_, compare_}) bar->addWidget(b);
  bar->addSeparator();
  bar->addWidget(parallel_);
  bar->addWidget(gpusPerRun_);
  auto* body = new QWidget;
  auto* layout = new QVBoxLayout(body);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->setSpacing(2);
  layout->addWidget(bar);
  layout->addWidget(message_);
  layout->addWidget(view_, 1);
  setWidget(body);

  // Always polled, seen or not: a queued run that starts is followed on the live page (runStarted).
  poll_ = new QTimer(this);
  poll_->setInterval(1000);
  connect(poll_, &QTimer::timeout, this, &QueueDock::poll);
  poll_->start();
  QTimer::singleShot(0, this, &QueueDock::poll);
  updateActions();
}

void QueueDock::buildTable() {
  model_ = new QueueModel(this);
  view_ = new QTableView;
  view_->setObjectName("queueTable");
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setDragDropMode(QAbstractItemView::InternalMove);
  view_->setDragDropOverwriteMode(false);
  view_->setDropIndicatorShown(true);
  view_->verticalHeader()->hide();
  view_->horizontalHeader()->setStretchLastSection(true);
  view_->horizontalHeader()->setSectionResizeMode(QueueModel::Name, QHeaderView::Stretch);
  view_->setColumnWidth(QueueModel::Order, 32);
  view_->setColumnWidth(QueueModel::Target, 110);
  view_->setColumnWidth(QueueModel::State, 110);
  connect(model_, &QueueModel::moveRequested, this, &QueueDock::moveItem);
  connect(view_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &QueueDock::updateActions);
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const QueueRow& r = model_->rows().value(i.row());
    if (r.state == QLatin1String("running")) Q_EMIT followRequested(r.runUid);
  });
}

void QueueDock::buildButtons() {
  auto button = [this](const QString& text, const QString& tip, const char* name) {
    auto* b = new QToolButton;
    b->setText(text), b->setToolTip(tip), b->setObjectName(name);
    b->setToolButtonStyle(Qt::ToolButtonTextOnly);
    return b;
  };
  add_ = button(tr("Add setup"), tr("Queue a run with the setup as it is now"), "queueAdd");
  runNow_ = button(tr("Run next now"), tr("Put the selected run at the head of the queue and let the queue work"),
                   "queueRunNow");
  up_ = button(tr("Up"), tr("Move the selected run one place earlier (or drag it)"), "queueUp");
  down_ = button(tr("Down"), tr("Move the selected run one place later (or drag it)"), "queueDown");
  remove_ = button(tr("Remove"), tr("Take the selected waiting run out of the queue"), "queueRemove");
  pause_ = button(tr("Pause queue"), tr("Start nothing new: runs going on go on"), "queuePause");
  pause_->setCheckable(true);
  follow_ =
      button(tr("Follow"), tr("Show the selected running run on the live page (or double-click it)"), "queueFollow");
  compare_ = button(tr("Compare ladder"), tr("Compare the runs of the selected run's ladder on the runs page"),
                    "queueCompareLadder");
  connect(add_, &QToolButton::clicked, this, &QueueDock::addCurrentSetup);
  connect(runNow_, &QToolButton::clicked, this, [this] { runNow(selectedId()); });
  connect(up_, &QToolButton::clicked, this, [this] { moveBy(selectedId(), -1); });
  connect(down_, &QToolButton::clicked, this, [this] { moveBy(selectedId(), +1); });
  connect(remove_, &QToolButton::clicked, this, [this] { removeItem(selectedId()); });
  connect(pause_, &QToolButton::clicked, this, [this](bool on) { setPaused(on); });
  connect(follow_, &QToolButton::clicked, this, [this] {
    const QueueRow& r = model_->rows().value(model_->rowOfId(selectedId()));
    if (!r.runUid.isEmpty()) Q_EMIT followRequested(r.runUid);
  });
  connect(compare_, &QToolButton::clicked, this, [this] {
    const QString ladder = ladderOf(model_->rows().value(model_->rowOfId(selectedId())).name);
    if (!ladder.isEmpty()) Q_EMIT compareLadderRequested(ladder);
  });
}

QueueDock::~QueueDock() {
  // `queue resume` only starts a detached worker and exits: let it, so the worker starts whatever happens here.
  if (starter_) starter_->disconnect(this), starter_->waitForFinished(5000);
}

void QueueDock::setDatabase(const QString& path) {
  opened_ = true;
  dataVersion_ = -1;
  store_.reset();
  try {
    store_ = std::make_unique<RunStore>(path.toStdString());
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
  }
  reload();
}

bool QueueDock::ensureStore() {
  if (!opened_) setDatabase(QString());
  return store_ != nullptr;
}

bool QueueDock::refresh() {
  if (!ensureStore()) return false;
  reload();
  return true;
}

void QueueDock::poll() {
  if (!ensureStore()) return;
  try {
    // data_version moves only when another connection commits; a running row's run state lives in its folder.
    bool running = false;
    for (const QueueRow& r : model_->rows()) running = running || r.state == QLatin1String("running");
    const qint64 worker = queue_worker_pid(store_->path());
    if (running || worker != workerPid_ || store_->db().query_int("PRAGMA data_version") != dataVersion_) reload();
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
  }
}

void QueueDock::reload() {
  if (!store_) return;
  const qint64 selected = selectedId();
  try {
    dataVersion_ = store_->db().query_int("PRAGMA data_version");
    RunQueue queue(*store_);
    paused_ = queue.paused();
    workerPid_ = queue_worker_pid(store_->path());
    const QSignalBlocker a(parallel_), b(gpusPerRun_);  // what the store says, not a new setting
    parallel_->setValue(static_cast<int>(queue.parallel()));
    gpusPerRun_->setValue(static_cast<int>(queue.gpus_per_run()));
    if (model_->reload(*store_)) selectItem(selected);
  } catch (const std::exception& e) {
    showMessage(describeError(e), true);
    return;
  }
  // The state in the title (the dock's tab when it shares the samples' place): no row of its own.
  const QString state = paused_ ? tr("paused") : workerPid_ != 0 ? tr("working") : tr("idle");
  setWindowTitle(tr("Queue (%1, %2)").arg(tr("%n waiting", nullptr, model_->waitingCount()), state));
  setToolTip(workerPid_ > 0 ? tr("Queue worker: pid %1").arg(workerPid_) : tr("No queue worker running"));
  pause_->setChecked(paused_);
  pause_->setText(paused_ ? tr("Resume queue") : tr("Pause queue"));
  announceStarts();
  updateActions();
}

// A run the dock saw waiting that has started: its folder has its pid, so the live page can follow it.
void QueueDock::announceStarts() {
  for (const QueueRow& r : model_->rows()) {
    if (r.state == QLatin1String("queued")) {
      seenWaiting_.insert(r.id);
      announced_.remove(r.id);  // a sweep's promoted trial waits again: its next segment is announced too
      continue;
    }
    if (!seenWaiting_.contains(r.id) || announced_.contains(r.id) || r.runUid.isEmpty()) continue;
    if (r.state != QLatin1String("removed") && path_exists(RunFolder{r.folder.toStdString()}.pid_file())) {
      announced_.insert(r.id);
      Q_EMIT runStarted(r.runUid);
    }
  }
}

void QueueDock::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? "color: #b00020;" : QString());
  message_->setVisible(!text.isEmpty());
}

QString QueueDock::message() const { return message_->text(); }

qint64 QueueDock::selectedId() const {
  const QModelIndexList rows = view_->selectionModel()->selectedRows();
  return rows.isEmpty() ? 0 : rows.first().data(QueueModel::IdRole).toLongLong();
}

void QueueDock::selectItem(qint64 id) {
  const int row = model_->rowOfId(id);
  if (row < 0) return view_->clearSelection();
  view_->selectRow(row);
}

void QueueDock::updateActions() {
  const QueueRow r = model_->rows().value(model_->rowOfId(selectedId()));
  const bool waiting = r.state == QLatin1String("queued");
  runNow_->setEnabled(waiting);
  up_->setEnabled(waiting && r.index > 0);
  down_->setEnabled(waiting && r.index + 1 < model_->waitingCount());
  remove_->setEnabled(waiting);
  follow_->setEnabled(r.state == QLatin1String("running") && !r.runUid.isEmpty());
  compare_->setEnabled(!ladderOf(r.name).isEmpty());
}

}  // namespace tokamak::ui
