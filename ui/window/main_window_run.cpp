// MainWindow's side of the run it follows (see main_window.h): the live-run picker (runs of this computer and the
// hosts to re-attach to), the run's events as they arrive, and the failure banner. The window's layout, actions
// and settings are main_window.cpp.
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
#include <QThreadPool>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/config/config.h"
#include "engine/fleet/notify/notify.h"
#include "engine/base/util/error.h"
#include "ui/plots/live_plots.h"
#include "ui/queue/ladder_queue.h"
#include "ui/queue/queue_dock.h"
#include "ui/remote/slurm_submit.h"
#include "ui/remote/where_box.h"
#include "ui/device/device_info.h"
#include "ui/common/programs.h"
#include "ui/live/host_recorders.h"
#include "ui/live/live_runs.h"
#include "ui/live/run_controller.h"
#include "ui/notify/studio_notices.h"
#include "ui/live/sample_process.h"
#include "ui/history/runs_panel.h"
#include "ui/samples/samples_panel.h"
#include "ui/setup/setup_panel.h"
#include "ui/status/run_status.h"
#include "ui/sweep/sweep_actions.h"

namespace tokamak::ui {

void MainWindow::showLiveRuns() {
  const QList<LiveRun>& runs = live_->runs();
  livePicker_->clear();
  for (const LiveRun& r : runs) {
    livePicker_->addItem(r.label());
    if (r.uid == controller_->runUid()) livePicker_->setCurrentIndex(livePicker_->count() - 1);
  }
  livePickerAction_->setVisible(runs.size() > 1);
  if (autoAttach_ && !controller_->isActive() && !runs.isEmpty()) {
    autoAttach_ = false;
    attachTo(runs.first());
  }
  if (!live_->listing()) autoAttach_ = false;  // only what the studio finds as it starts is attached by itself
  recordOthers();
}

// Every run on a host but the live page's is recorded in the background (this computer's record themselves).
void MainWindow::recordOthers() {
  for (const LiveRun& r : live_->runs())
    if (!r.host.isEmpty() && r.uid != controller_->runUid()) recorders_->record(r, tokamakFrontPath());
}

void MainWindow::pickLiveRun(int index) {
  if (index < 0 || index >= live_->runs().size()) return;
  const LiveRun& r = live_->runs()[index];
  autoAttach_ = false;
  if (controller_->isActive() && r.uid == controller_->runUid()) return;
  if (!controller_->isActive()) return attachTo(r);
  // The run followed now trains on; the picked one is attached once its reader has ended.
  pickedUid_ = r.uid, pickedHost_ = r.host, pickedTokamak_ = r.tokamak;
  controller_->detach();
}

void MainWindow::attachTo(const LiveRun& run) {
  recorders_->stop(run.uid);  // the live page's reader takes over from where the recorder got to
  plots_->clear();
  samples_->clear();
  failure_->hide();
  showLivePage();
  if (controller_->attach(run.host, run.tokamak, run.uid)) status_->setState(tr("re-attaching"));
  recordOthers();  // the run shown before, if it was a host's, is recorded from now on
}

void MainWindow::onBatch(const RunBatch& batch) {
  if (batch.dropAfter) plots_->dropAfter(*batch.dropAfter);  // a rollback: those steps are trained again
  plots_->appendSteps(batch.steps);
  plots_->appendEvals(batch.evals);
  plots_->markSpikes(batch.spikes);
  plots_->flush();
  samples_->appendSamples(batch.samples);
  // A host's checkpoints are files there: its "Sample now" asks the run (SamplesPanel::setHostRun).
  if (!batch.checkpoints.empty() && !controller_->isRemote())
    samples_->setCheckpoint(controller_->lastCheckpoint(), controller_->lastCheckpointStep());
  if (batch.progress) status_->setProgress(*batch.progress);
  if (!batch.steps.empty()) status_->stepped(batch.steps.back());
  // Skipped steps and dataset warnings stay in the read-out; the newest also flashes in the status bar.
  if (const QString line = status_->note(batch.skips, batch.warnings); !line.isEmpty())
    statusBar()->showMessage(line, 15000);
  if (const QString line = status_->noteSpikes(batch.spikes); !line.isEmpty()) statusBar()->showMessage(line, 15000);
  // A stall is the run's state until its next step; a slowdown says what changed on the machine.
  for (const AlertEvent& a : batch.alerts) {
    const QString message = QString::fromStdString(a.message);
    if (a.kind == "stalled") {
      status_->setState(tr("stalled"));
      notifyStall(a);
    }
    else if (a.kind == "stall_over" && status_->stateText() == tr("stalled")) status_->setState(tr("running"));
    statusBar()->showMessage(tr("%1 at step %2: %3").arg(QString::fromStdString(a.kind)).arg(a.step).arg(message),
                             30000);
    status_->noteAlert(a);
  }
  // The store has committed these rows before the bridge saw them: the runs page can show them now.
  if (!batch.evals.empty() || !batch.checkpoints.empty()) runs_->refresh();
}

// A run of this computer: its own process cannot say it stalled, so the studio does. A host's run is told by
// `tokamak remote`, the child following it (it tells of all that run's events).
void MainWindow::notifyStall(const AlertEvent& a) {
  if (controller_->isRemote()) return;
  const RunStart& run = controller_->runStart();
  notices_->post({"stalled", run.name + ": stalled", a.message, run.run_uid, run.name, a.step});
}

// Each rank's device with its name: rank r of a data-parallel run trains on cuda:r (the launcher's
// LOCAL_RANK) or, on a CPU, on the CPU like rank 0.
static QStringList rankDevices(const RunStart& start) {
  const DeviceInfo& info = deviceInfo();
  const QString device = QString::fromStdString(start.device);
  const bool cuda = device.startsWith("cuda");
  const int first = cuda ? device.section(':', 1).toInt() : 0;
  QStringList out;
  for (int r = 0; r < std::max(1, start.world_size); ++r) {
    if (!cuda) {
      out << QString("cpu (%1)").arg(info.cpuName);
      continue;
    }
    const int index = first + r;
    const QString name = index < info.gpuCount() ? info.gpuNames[index] : QString::fromStdString(start.gpu_name);
    out << QString("cuda:%1 (%2)").arg(index).arg(name);
  }
  return out;
}

void MainWindow::onRunStarted(const RunStart& start) {
  // Its host is a known host from now on: the next start lists its live runs there (LiveRuns).
  if (controller_->isRemote()) LiveRuns::rememberHost(controller_->runHost(), controller_->runTokamak());
  status_->runStarted(start, rankDevices(start));
  if (!controller_->slurmJob()) status_->setState(tr("running"));  // a job's: its queue state until a step
  statusBar()->showMessage(
      tr("%1 on %2").arg(QString::fromStdString(start.name), QString::fromStdString(start.dataset)), 8000);
  runs_->refresh();
}

void MainWindow::onRunEnded(const EndEvent& end) {
  live_->refresh();  // the picker drops the run that ended
  const QString status = QString::fromStdString(end.status);
  status_->runEnded(status);
  const StepEvent& last = controller_->lastStep();
  const double peak = last.metric("mem_peak");
  if (peak > 0)
    setup_->showMeasuredPeak(static_cast<int64_t>(peak), QString::fromStdString(controller_->runStart().device));
  if (end.status == "failed" || end.status == "crashed") showFailure(status, QString::fromStdString(end.error));
  else statusBar()->showMessage(tr("Run %1 at step %2").arg(status).arg(end.step), 10000);
  runs_->refresh();
}

void MainWindow::showFailure(const QString& status, const QString& why) {
  failureText_->setText(tr("The run %1: %2").arg(status, why));
  failure_->show();
  statusBar()->showMessage(tr("Run %1: %2").arg(status, why));
  showLivePage();
}

QString MainWindow::failureText() const {
  return failure_->isVisible() || !failure_->isHidden() ? failureText_->text() : QString();
}

void MainWindow::followSlurmJob(const QString& host, const QString& tokamak, const QJsonObject& job,
                                const Config& config) {
  if (controller_->isActive()) return;
  autoAttach_ = false;
  plots_->clear();
  samples_->clear();
  failure_->hide();
  showLivePage();
  controller_->followSlurmJob(host, tokamak, job.value("job_id").toInteger(), job.value("run_uid").toString(),
                              job.value("folder").toString(), config);
  statusBar()->showMessage(
      tr("Submitted Slurm job %1: run %2").arg(job.value("job_id").toInteger()).arg(job.value("name").toString()),
      10000);
}

bool MainWindow::queueRuns(const QStringList& configJsons) {
  QList<Config> configs;
  try {
    for (const QString& json : configJsons) configs << config_from_json(json.toStdString());
  } catch (const Error& e) {
    statusBar()->showMessage(tr("Not queued: %1").arg(QString::fromStdString(e.what())), 10000);
    return false;
  }
  queue_->show();
  queue_->raise();
  const bool queued = queue_->addConfigs(configs);
  statusBar()->showMessage(queue_->message(), 10000);
  return queued;
}

bool MainWindow::runLadder(const QString& path, const QList<qint64>& seeds) {
  queue_->show();
  queue_->raise();
  const bool queued = queue_->queueLadder(path, seeds);
  statusBar()->showMessage(queue_->message(), 10000);
  return queued;
}

bool MainWindow::compareLadder(const QString& ladder) {
  showRunsPage();
  if (ladderCompare_->compare(ladder)) return true;
  statusBar()->showMessage(tr("No run of ladder %1 has started yet").arg(ladder), 10000);
  return false;
}

// A queue run that started is shown when the live page is free (nothing followed, or its run has ended); one
// the user picks is shown at once (the run followed now trains on, as with the live-runs picker).
void MainWindow::followRun(const QString& uid, bool onlyWhenFree) {
  if (closing_ || uid == controller_->runUid()) return;
  autoAttach_ = false;
  if (!controller_->isActive()) return attachTo(LiveRun{{}, {}, uid, {}, {}});
  if (onlyWhenFree && !controller_->hasEnded()) return;
  pickedUid_ = uid, pickedHost_.clear(), pickedTokamak_.clear();  // attached once the current reader has ended
  if (!controller_->hasEnded()) controller_->detach();
}

}  // namespace tokamak::ui
