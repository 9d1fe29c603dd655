// MainWindow: docks, pages, run actions and their wiring (see main_window.h).
#include "ui/window/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "ui/plots/live_plots.h"
#include "ui/queue/ladder_queue.h"
#include "ui/queue/queue_dock.h"
#include "ui/remote/slurm_submit.h"
#include "ui/remote/where_box.h"
#include "ui/device/device_info.h"
#include "ui/common/programs.h"
#include "ui/live/host_recorders.h"
#include "ui/notify/notify_dialog.h"
#include "ui/notify/studio_notices.h"
#include "ui/setup/all_settings.h"
#include "ui/plan/plan_view.h"
#include "ui/playground/playground_view.h"
#include "ui/live/live_runs.h"
#include "ui/live/run_controller.h"
#include "ui/live/sample_process.h"
#include "ui/history/runs_panel.h"
#include "ui/samples/samples_panel.h"
#include "ui/setup/setup_files.h"
#include "ui/setup/setup_panel.h"
#include "ui/status/run_status.h"
#include "ui/sweep/sweep_actions.h"

// The icon lives in tokamak_ui's resources; a static library's resources must be registered by hand.
static void initResources() { Q_INIT_RESOURCE(tokamak); }

namespace tokamak::ui {


MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  initResources();
  setObjectName("TokamakStudio");
  setWindowTitle(tr("Tokamak Studio"));
  setWindowIcon(QIcon(":/icons/tokamak.svg"));
  controller_ = new RunController(this);
  live_ = new LiveRuns(this);
  recorders_ = new HostRecorders(this);
  setup_ = new SetupPanel;
  plots_ = new LivePlots;
  samples_ = new SamplesPanel;
  runs_ = new RunsPanel;
  status_ = new RunStatus;

  buildFailureBanner();
  buildPages();
  statusBar()->addPermanentWidget(status_);

  buildActions();
  buildDocks();
  connectRunSignals();
  connectPlan();
  connectSlurm();
  connectPanels();
  closeQuestion_ = [this] {
    QMessageBox box(QMessageBox::Question, tr("Close during a run?"),
                    tr("A run is in progress. Stop it (a checkpoint is written), or keep it training without the "
                       "studio (it is followed again at the next start)?"),
                    QMessageBox::Cancel, this);
    QAbstractButton* stop = box.addButton(tr("Stop and close"), QMessageBox::DestructiveRole);
    QAbstractButton* keep = box.addButton(tr("Keep training"), QMessageBox::AcceptRole);
    box.exec();
    return box.clickedButton() == stop ? CloseStop : box.clickedButton() == keep ? CloseKeepTraining : CloseCancel;
  };
  restoreSettings();
  updateActions();
  // Runs still going here or on a known host (the studio closed or killed mid-run) train on: the first one
  // found is followed again, its journal replayed from its start; the picker offers the others.
  connect(live_, &LiveRuns::changed, this, &MainWindow::showLiveRuns);
  connect(
      controller_, &RunController::stateChanged, this,
      [this] {
        if (controller_->isActive() || pickedUid_.isEmpty()) return;
        const LiveRun picked{pickedHost_, pickedTokamak_, pickedUid_, {}, {}};
        pickedUid_.clear();
        attachTo(picked);
      },
      Qt::QueuedConnection);
  live_->refresh();
}

MainWindow::~MainWindow() { controller_->stopAndWait(kCloseGraceMs); }

void MainWindow::buildFailureBanner() {
  // A failed run says why above its plots, which keep the history up to the failure.
  failure_ = new QWidget;
  failure_->setObjectName("failureBanner");
  auto* icon = new QLabel;
  icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical).pixmap(24, 24));
  failureText_ = new QLabel;
  failureText_->setWordWrap(true);
  failureText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* dismiss = new QToolButton;
  dismiss->setText(tr("Dismiss"));
  connect(dismiss, &QToolButton::clicked, failure_, &QWidget::hide);
  auto* banner = new QHBoxLayout(failure_);
  banner->addWidget(icon);
  banner->addWidget(failureText_, 1);
  banner->addWidget(dismiss);
  failure_->hide();
}

void MainWindow::buildPages() {
  auto* live = new QWidget;
  auto* liveLayout = new QVBoxLayout(live);
  liveLayout->setContentsMargins(4, 4, 4, 4);
  liveLayout->addWidget(failure_);
  liveLayout->addWidget(plots_, 1);
  pages_ = new QTabWidget;
  pages_->addTab(live, tr("Live run"));
  pages_->addTab(runs_, tr("Runs, compare and export"));
  sweeps_ = new SweepActions(
      pages_, [this] { return setup_->config(); }, this);  // the "Sweeps" page
  plan_ = new PlanView({[this] { return setup_->config(); }, [this] { return setup_->whereBox()->host(); },
                        [this] { return setup_->whereBox()->devices(); }});
  pages_->addTab(plan_, tr("Plan"));
  playground_ = new PlaygroundView;
  pages_->addTab(playground_, tr("Playground"));
  connect(controller_, &RunController::runEnded, playground_, &PlaygroundView::refresh);
  setCentralWidget(pages_);
  // Only the page shown sets the window's least width: the live plots need 670 px, which leaves a 1366-pixel
  // screen room for the setup's two columns beside them, and the runs page's rows wrap (FlowRow) to fit the
  // same room, so changing pages never moves the setup dock (test_studio_layout's pagesKeepTheSetupLayout).
  auto onlyShownPageCounts = [this] {
    for (int i = 0; i < pages_->count(); ++i) {
      QSizePolicy policy = pages_->widget(i)->sizePolicy();
      policy.setHorizontalPolicy(i == pages_->currentIndex() ? QSizePolicy::Preferred : QSizePolicy::Ignored);
      pages_->widget(i)->setSizePolicy(policy);
    }
  };
  connect(pages_, &QTabWidget::currentChanged, this, onlyShownPageCounts);
  onlyShownPageCounts();
}

void MainWindow::connectRunSignals() {
  // A notice the studio could not send (studio_notices.h): said once in the status bar, kept in the run's read-out.
  notices_ = new StudioNotices(this);
  connect(notices_, &StudioNotices::notSent, this, [this](const QString& why) {
    statusBar()->showMessage(tr("A notification was not sent: %1").arg(why), 30000);
    status_->noteAlert({"notification_not_sent", controller_->lastStep().step, why.toStdString()});
  });
  connect(controller_, &RunController::batchArrived, this, &MainWindow::onBatch);
  connect(controller_, &RunController::runStarted, this, &MainWindow::onRunStarted);
  connect(controller_, &RunController::runReset, status_, &RunStatus::clearNotes);
  connect(controller_, &RunController::runEnded, this, &MainWindow::onRunEnded);
  connect(controller_, &RunController::stateChanged, this, &MainWindow::updateActions);
  connect(controller_, &RunController::stateChanged, this, &MainWindow::finishClosing);
  connect(controller_, &RunController::storeChanged, runs_, &RunsPanel::refresh);
  // Where the next run trains (ui/remote); a host's dropped connection shows until its events flow again.
  auto where = [this] { controller_->setHost(setup_->whereBox()->host(), setup_->whereBox()->tokamakCommand()); };
  connect(setup_->whereBox(), &WhereBox::changed, this, where);
  where();
}

void MainWindow::connectPlan() {
  // The Plan page follows the setup, the host and the store; its Apply sets what makes a device fit.
  connect(setup_, &SetupPanel::configChanged, plan_, &PlanView::scheduleRefresh);
  connect(setup_->whereBox(), &WhereBox::changed, plan_, &PlanView::scheduleRefresh);
  connect(setup_->whereBox(), &WhereBox::tested, plan_, &PlanView::scheduleRefresh);
  connect(controller_, &RunController::runEnded, plan_, &PlanView::scheduleRefresh);
  connect(plan_, &PlanView::applyRequested, this, [this](const QStringList& sets) {
    Config c = setup_->config();
    std::vector<std::string> overrides;
    for (const QString& s : sets) overrides.push_back(s.toStdString());
    try {
      apply_overrides(c, overrides);
      setup_->setConfig(c);
      statusBar()->showMessage(tr("Set %1 for the plan's fit").arg(sets.join(' ')), 10000);
    } catch (const std::exception& e) {
      statusBar()->showMessage(QString::fromStdString(e.what()), 10000);
    }
  });
}

void MainWindow::connectSlurm() {
  // A Slurm job (ui/remote/slurm_submit.h): its queue state in the status until the first step; a requeue is a
  // gap in the same curves.
  connect(slurm_, &SlurmSubmit::submitted, this, &MainWindow::followSlurmJob);
  connect(controller_, &RunController::queueChanged, status_, &RunStatus::setState);
  connect(controller_, &RunController::requeued, this, [this](qint64 step) {
    plots_->addGap();
    statusBar()->showMessage(tr("Slurm requeued the job at step %1: the run resumes from its checkpoint").arg(step),
                             10000);
  });
  connect(controller_, &RunController::connectionChanged, this, [this](bool connected, const QString& note) {
    status_->setState(connected ? tr("running") : tr("disconnected — retrying"));
    status_->setToolTip(note);
  });
}

void MainWindow::connectPanels() {
  connect(samples_->job(), &SampleProcess::finished, this, &MainWindow::finishClosing, Qt::QueuedConnection);
  connect(setup_, &SetupPanel::problemsChanged, this, &MainWindow::updateActions);
  connect(runs_, &RunsPanel::rerunRequested, this, [this](const QString& json) { loadRunConfig(json, {}); });
  connect(runs_, &RunsPanel::repeatRequested, this, &MainWindow::queueRuns);
  // The queue (ui/queue): a run it starts is followed when the live page is free; any running one on request.
  ladderCompare_ = new LadderCompare(runs_);
  queue_->setSetupSource([this] { return setup_->config(); });
  connect(queue_, &QueueDock::runStarted, this, [this](const QString& uid) { followRun(uid, true); });
  connect(queue_, &QueueDock::followRequested, this, [this](const QString& uid) { followRun(uid, false); });
  connect(queue_, &QueueDock::compareLadderRequested, this, &MainWindow::compareLadder);
  connect(runs_, &RunsPanel::resumeRequested, this,
          [this](const QString& checkpoint, const QString& json) { loadRunConfig(json, checkpoint); });
  // "Sample now" on a host's run asks the run itself (its checkpoints are files there).
  connect(samples_, &SamplesPanel::sampleRequested, controller_, &RunController::requestSample);
  connect(controller_, &RunController::stateChanged, samples_, [this](RunController::State state) {
    samples_->setHostRun(controller_->isRemote() && state != RunController::State::Idle);
  });
}

void MainWindow::buildActions() {
  QToolBar* bar = addToolBar(tr("Run"));
  bar->setObjectName("runToolBar");
  bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  auto add = [&](const QString& text, QStyle::StandardPixmap icon, const QString& tip, void (MainWindow::*slot)()) {
    QAction* a = bar->addAction(style()->standardIcon(icon), text, this, slot);
    a->setToolTip(tip);
    return a;
  };
  start_ = add(tr("Start"), QStyle::SP_MediaPlay, tr("Start a run with this setup"), &MainWindow::startRun);
  slurm_ = new SlurmSubmit(
      setup_->whereBox(), [this] { return setup_->config(); }, this);
  slurm_->action()->setIcon(style()->standardIcon(QStyle::SP_ArrowUp));
  bar->addAction(slurm_->action());
  pause_ = add(tr("Pause"), QStyle::SP_MediaPause, tr("Hold the run between steps"), &MainWindow::pauseRun);
  resume_ = add(tr("Resume"), QStyle::SP_MediaSeekForward,
                tr("Continue a paused run, or a stopped one from its last checkpoint"), &MainWindow::resumeRun);
  stop_ = add(tr("Stop"), QStyle::SP_MediaStop, tr("Finish the current step, write a checkpoint and stop"),
              &MainWindow::stopRun);
  sample_ = add(tr("Sample"), QStyle::SP_FileDialogDetailedView, tr("The run writes a sample at its next step"),
                &MainWindow::sampleRun);
  // Several runs going (here or on hosts): which one the live page follows; the others train on unwatched.
  livePicker_ = new QComboBox;
  livePicker_->setObjectName("liveRuns");
  livePicker_->setToolTip(tr("Runs still going: the live page follows the one picked"));
  livePickerAction_ = bar->addWidget(livePicker_);
  livePickerAction_->setVisible(false);
  connect(livePicker_, &QComboBox::activated, this, &MainWindow::pickLiveRun);
  start_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  // Where the next run trains, beside Start: as a section of the setup it pushed the speed-ups below the fold.
  QToolBar* where = addToolBar(tr("Where"));
  where->setObjectName("whereToolBar");
  where->addWidget(setup_->whereBox());

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Save setup…"), setup_, &SetupPanel::saveSetupAs);
  file->addAction(tr("Load setup…"), setup_, &SetupPanel::loadSetupFrom);
  file->addAction(tr("Open ladder…"), setup_, [this] { setup_->openLadder(); });
  file->addAction(tr("All settings…"), this, [this] {
    AllSettingsDialog dialog(setup_->config(), this);
    if (dialog.exec() == QDialog::Accepted) setup_->setConfig(dialog.config());
  });
  file->addSeparator();
  file->addAction(tr("Notifications…"), this, [this] { NotifyDialog(this).exec(); });
  file->addAction(tr("Quit"), QKeySequence::Quit, this, &QWidget::close);
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addActions({start_, slurm_->action(), pause_, resume_, stop_, sample_});
  run->addSeparator();
  run->addAction(sweeps_->action());
  run->addAction(tr("Add setup to queue"), this,
                 [this] { queue_->addCurrentSetup(), queue_->show(), queue_->raise(); });
  run->addAction(tr("Run ladder…"), this, [this] {
    QString path;
    QList<qint64> seeds;
    if (askLadderRun(this, &path, &seeds)) runLadder(path, seeds);
  });
}

void MainWindow::buildDocks() {
  setupDock_ = new QDockWidget(tr("Setup"), this);
  setupDock_->setObjectName("setupDock");
  setupDock_->setWidget(setup_);
  addDockWidget(Qt::LeftDockWidgetArea, setupDock_);
  samplesDock_ = new QDockWidget(tr("Samples"), this);
  samplesDock_->setObjectName("samplesDock");
  samplesDock_->setWidget(samples_);
  addDockWidget(Qt::BottomDockWidgetArea, samplesDock_);
  // The queue shares the samples' place (a tab): a dock of its own would take the plots' height.
  queue_ = new QueueDock(this);
  addDockWidget(Qt::BottomDockWidgetArea, queue_);
  tabifyDockWidget(samplesDock_, queue_);
  samplesDock_->raise();
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);  // the setup runs the full height
  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(setupDock_->toggleViewAction());
  view->addAction(samplesDock_->toggleViewAction());
  view->addAction(queue_->toggleViewAction());
}

void MainWindow::setDatabase(const QString& path) {
  controller_->setDatabase(path);
  slurm_->setDatabase(path);
  recorders_->setDatabase(path);
  runs_->setDatabase(path);
  sweeps_->setDatabase(path);
  queue_->setDatabase(path);
  plan_->setDatabase(path);
  playground_->setDatabase(path);
}

void MainWindow::startRun() {
  if (controller_->isActive() || !setup_->canStart()) return;
  autoAttach_ = false;
  plots_->clear();
  samples_->clear();
  failure_->hide();
  if (controller_->start(setup_->config())) status_->setState(tr("preparing"));
}

void MainWindow::pauseRun() { controller_->pause(); }

void MainWindow::resumeRun() {
  if (controller_->state() == RunController::State::Paused) return controller_->resume();
  if (controller_->isActive() || controller_->lastCheckpoint().isEmpty()) return;
  // A stopped (or failed) run continues from its last checkpoint, on the same curves.
  Config c = controller_->config();
  c.checkpoint.resume = controller_->lastCheckpoint().toStdString();
  failure_->hide();
  if (controller_->start(c)) status_->setState(tr("resuming"));
}

void MainWindow::stopRun() { controller_->stop(); }
void MainWindow::sampleRun() { controller_->sampleNow(); }

void MainWindow::showLivePage() { pages_->setCurrentIndex(0); }
void MainWindow::showRunsPage() { pages_->setCurrentIndex(1); }

void MainWindow::updateActions() {
  using State = RunController::State;
  const State s = controller_->state();
  const bool idle = s == State::Idle;
  const QString ended = QString::fromStdString(controller_->lastEnd().status);
  start_->setEnabled(idle && setup_->canStart());
  start_->setToolTip(setup_->canStart() ? tr("Start a run with this setup")
                                        : tr("Fix the problems listed under the setup first"));
  slurm_->setAllowed(idle && setup_->canStart(), idle ? tr("Fix the problems listed under the setup first")
                                                      : tr("A run is active: one run at a time"));
  pause_->setEnabled(controller_->canPause());
  pause_->setToolTip(s == State::Running && controller_->slurmJob()
                         ? tr("A Slurm job does not pause: it would hold its nodes")
                     : s == State::Running && !controller_->canPause()
                         ? tr("Data-parallel runs cannot pause (their ranks agree only on stop)")
                         : tr("Hold the run between steps"));
  stop_->setToolTip(controller_->slurmJob()
                        ? tr("Cancel the Slurm job (scancel): its run writes a checkpoint and stops")
                        : tr("Finish the current step, write a checkpoint and stop"));
  resume_->setEnabled(s == State::Paused || (idle && (ended == "stopped" || ended == "failed" || ended == "crashed") &&
                                             !controller_->lastCheckpoint().isEmpty()));
  stop_->setEnabled(s == State::Running || s == State::Paused);
  sample_->setEnabled(s == State::Running);
  setup_->setEditable(idle);
  if (s == State::Paused) status_->setState(tr("paused"));
  else if (s == State::Stopping) status_->setState(tr("stopping"));
  else if (s == State::Running && status_->stateText() == tr("paused")) status_->setState(tr("running"));
}

void MainWindow::loadRunConfig(const QString& json, const QString& resumeFrom) {
  try {
    Config c = config_from_json(json.toStdString());
    c.checkpoint.resume = resumeFrom.toStdString();
    setup_->setConfig(c);
    setupDock_->show();
    statusBar()->showMessage(resumeFrom.isEmpty() ? tr("Loaded the run's setup: change what you like, then Start")
                                                  : tr("Start resumes from %1").arg(resumeFrom),
                             10000);
  } catch (const Error& e) {
    QMessageBox::warning(this, tr("Load run"), QString::fromStdString(e.what()));
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // A run that has sent its end event is only exiting: nothing to ask, close once its process is gone.
  const bool live = controller_->isActive() && !controller_->hasEnded();
  if (live && controller_->isRemote() && !closing_) {
    // A run on a host goes on training there; only the reader here ends (re-attached on the next start).
    closing_ = true;
    controller_->detach();
  }
  if (!live && !samples_->isSampling() && controller_->isActive()) closing_ = true;
  const bool busy = live || samples_->isSampling();
  if (busy && !closing_) {
    const int answer = closeQuestion_();
    if (answer == CloseCancel) return event->ignore();
    closing_ = true;
    samples_->job()->cancel();
    if (live && answer == CloseKeepTraining) {
      controller_->detach();  // only the reader ends; the run trains on (LiveRuns finds it at the next start)
    } else {
      // Never wait here: the run writes its checkpoint and ends as "stopped", and finishClosing() closes the
      // window then. A run that has not ended after kCloseGraceMs is killed (its last checkpoint stays).
      controller_->stop();
      QTimer::singleShot(kCloseGraceMs, controller_, &RunController::kill);
      statusBar()->showMessage(tr("Stopping the run before closing…"));
    }
  }
  if (controller_->isActive() || samples_->isSampling()) return event->ignore();
  saveSettings();
  event->accept();
}

void MainWindow::finishClosing() {
  if (closing_ && !controller_->isActive() && !samples_->isSampling()) QTimer::singleShot(0, this, &QWidget::close);
}

void MainWindow::saveSettings() const {
  QSettings settings("Tokamak", "Tokamak Studio");
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  if (!keepSavedSetup_)
    settings.setValue("setup/config", QString::fromStdString(setupWithLeftOutKeys(
                                          config_to_json(setup_->config(), -1), savedSetup_.toStdString(), leftOutKeys_)));
}

void MainWindow::fitTo(const QRect& available) {
  // A small screen is all needed; a large one keeps a margin. The height leaves room for a title bar.
  const bool small = available.width() < 1600;
  const QSize size(small ? available.width() : available.width() * 94 / 100, available.height() * 94 / 100);
  resize(size);
  move(available.center() - QPoint(size.width() / 2, size.height() / 2));
  // Two columns show the speed-ups beside the model, without scrolling, but not at the price of plots too
  // narrow to read: they keep half the window and three columns of plots.
  const int two = setup_->widthFor(2);
  const int dock = size.width() - two >= std::max(kMinPlotsWidth, size.width() / 2) ? two : setup_->widthFor(1);
  resizeDocks({setupDock_}, {dock}, Qt::Horizontal);
  resizeDocks({samplesDock_}, {std::min(220, size.height() / 4)}, Qt::Vertical);
}

void MainWindow::restoreSettings() {
  QSettings settings("Tokamak", "Tokamak Studio");
  const bool placed = restoreGeometry(settings.value("window/geometry").toByteArray());
  if (!restoreState(settings.value("window/state").toByteArray()) || !placed) fitTo(screen()->availableGeometry());
  const QString json = settings.value("setup/config").toString();
  if (json.isEmpty()) return;
  // A setup saved by another version may hold keys this one lacks: the rest loads, and the window says what was
  // left out. One that does not load at all is kept as it is (not written over on close) and named.
  std::vector<std::string> leftOut;
  try {
    setup_->setConfig(config_from_json(json.toStdString(), Config{}, &leftOut));
  } catch (const Error& e) {
    keepSavedSetup_ = true;
    statusBar()->showMessage(tr("The saved setup could not be loaded (%1); the defaults are shown and the saved "
                                "one is kept as it is")
                                 .arg(QString::fromStdString(e.what())));
    return;
  }
  if (!leftOut.empty()) {
    QStringList& keys = leftOutKeys_;
    savedSetup_ = json;
    for (const std::string& k : leftOut) keys << QString::fromStdString(k);
    statusBar()->showMessage(
        tr("The saved setup's %1 %2 not known to this version (or not valid here): left out, the rest loaded")
            .arg(keys.join(", "))
            .arg(keys.size() == 1 ? tr("is") : tr("are")));
  }
}

}  // namespace tokamak::ui
