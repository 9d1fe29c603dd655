// The studio's "Submit to Slurm" against a real one-node Slurm (Debian's slurmctld, slurmd and munge, started
// by tests/support/slurm_cluster.h on localhost): the action is offered only where sbatch is found; the dialog
// is filled, shows the job script from the CLI's dry run before Submit does anything, and a bad field is one
// line with nothing queued; a submitted job's live page shows the queue state (pending and why while its
// partition is down, then running on its node), the first steps arrive live, and Stop is scancel: the job
// ends cancelled, the run stopped with a resumable checkpoint in its folder. A `scontrol requeue` of a
// --requeue job stays one run, with a gap in its curves, and goes on to its planned end; the next dialog is
// pre-filled with the partition used last. Last, the cluster's login node over ssh (Debian's sshd on loopback):
// offered after "Test connection", submitted there, followed and recorded here, Stop = scancel there.
#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QtTest>

#include <memory>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/run/checkpoint_files.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/sshd_server.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/remote/slurm_dialog.h"
#include "ui/remote/slurm_submit.h"
#include "ui/remote/where_box.h"
#include "ui/live/run_controller.h"
#include "ui/setup/setup_panel.h"
#include "ui/status/run_status.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

// `tokamak slurm status JOB --json`, as a user would ask.
QJsonObject jobStatus(qint64 job) {
  return test::run_tokamak({"slurm", "status", QString::number(job), "--json"}, {}, 60000).json();
}

}  // namespace

class TestStudioSlurm : public QObject {
  Q_OBJECT
  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SlurmCluster> slurm_;
  std::string data_;

  Config tinyRun(int steps) {
    Config c;
    apply_overrides(
        c, test::quiet_run_overrides(data_, steps, {"speed.precision=fp32", "device=cpu", "name=studio-slurm"}));
    return c;
  }

  // Opens the dialog from the action (which must be offered here), fills it and shows the script.
  SlurmDialog* openDialog(MainWindow& w, const QString& partition, const QString& time, bool requeue) {
    QAction* submit = w.slurmSubmit()->action();
    if (!QTest::qWaitFor([&] { return submit->isEnabled(); }, 60000)) {
      qWarning("Submit to Slurm not offered: %s", qPrintable(submit->toolTip()));
      return nullptr;
    }
    submit->trigger();
    SlurmDialog* d = w.slurmSubmit()->dialog();
    if (!d) return nullptr;
    if (!partition.isEmpty()) d->findChild<QComboBox*>("partition")->setCurrentText(partition);
    d->findChild<QComboBox*>("rankKind")->setCurrentIndex(1);  // CPU tasks
    d->findChild<QSpinBox*>("ranksPerNode")->setValue(1);
    d->findChild<QLineEdit*>("timeLimit")->setText(time);
    d->findChild<QCheckBox*>("requeue")->setChecked(requeue);
    return d;
  }

  // "Show job script", then wait for the script or the one-line refusal.
  static void showScript(SlurmDialog* d) {
    d->findChild<QPushButton*>("showScript")->click();
    QTRY_VERIFY_WITH_TIMEOUT(!d->script().isEmpty() || (!d->message().isEmpty() && !d->message().endsWith("…")), 60000);
  }

  QString queue() const { return slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"}).trimmed(); }

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    data_ = env_->corpus_excerpt(60000);
    slurm_ = std::make_unique<test::SlurmCluster>();
    QVERIFY2(slurm_->ok(), qPrintable(slurm_->error()));  // CI fails here, in one line, rather than skipping
  }

  void cleanup() { test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString()); }
  void cleanupTestCase() { slurm_.reset(); }

  // Where sbatch is not on the PATH, the action is there but disabled, and its tooltip says why.
  void notOfferedWithoutSbatch() {
    const QByteArray path = qgetenv("PATH");
    QTemporaryDir bare;
    QFile::link("/bin/sh", bare.filePath("sh"));
    qputenv("PATH", bare.path().toLocal8Bit());  // the studio's children inherit it
    {
      MainWindow w;
      QAction* submit = w.slurmSubmit()->action();
      QTRY_VERIFY_WITH_TIMEOUT(submit->toolTip().startsWith("Not offered"), 60000);
      qputenv("PATH", path);
      QVERIFY(!submit->isEnabled());
      QVERIFY2(submit->toolTip().contains("no sbatch on this computer"), qPrintable(submit->toolTip()));
    }
    qputenv("PATH", path);
  }

  // A bad time limit and a partition that does not exist: one line each, nothing queued, no run folder.
  void badFieldsAreOneLine() {
    MainWindow w;
    w.setupPanel()->setConfig(tinyRun(5));
    SlurmDialog* d = openDialog(w, "debug", "4h", false);
    QVERIFY(d);
    auto* submit = d->findChild<QPushButton*>("submit");
    QVERIFY(!submit->isEnabled());
    showScript(d);
    QVERIFY2(
        d->message().contains("4h") && d->message().contains("is not a Slurm time") && !d->message().contains('\n'),
        qPrintable(d->message()));
    QVERIFY(d->script().isEmpty());
    QVERIFY(!submit->isEnabled());
    // The dry run does not ask Slurm: a partition that does not exist shows its script; Submit then refuses.
    d->findChild<QLineEdit*>("timeLimit")->setText("01:00:00");
    d->findChild<QComboBox*>("partition")->setCurrentText("nosuch");
    showScript(d);
    QVERIFY2(d->script().contains("#SBATCH --partition=nosuch"), qPrintable(d->message()));
    QVERIFY(submit->isEnabled());
    submit->click();
    QTRY_VERIFY_WITH_TIMEOUT(d->message().startsWith("partition 'nosuch' does not exist on this computer"), 60000);
    QVERIFY2(!d->message().contains('\n'), qPrintable(d->message()));
    QVERIFY(d->isVisible());
    QCOMPARE(queue(), QString());
    QVERIFY(list_run_folders().empty());
    QVERIFY(!w.runController()->isActive());
    d->reject();
  }

  // Submit while the partition is down (pending: PartitionDown), bring it up (running on localhost), the
  // first steps live, then Stop: scancel, the run stopped with a checkpoint it resumes from.
  void submitQueueStepsAndStop() {
    MainWindow w;
    w.setupPanel()->setConfig(tinyRun(100000));
    SlurmDialog* d = openDialog(w, "down", "01:00:00", false);
    QVERIFY(d);
    // The partitions are Slurm's, offered in the dialog.
    auto* partition = d->findChild<QComboBox*>("partition");
    QVERIFY(partition->findText("debug") >= 0 && partition->findText("down") >= 0);
    auto* submit = d->findChild<QPushButton*>("submit");
    QVERIFY(!submit->isEnabled());  // the script first
    showScript(d);
    for (const char* line : {"#!/bin/bash\n", "#SBATCH --partition=down", "#SBATCH --ntasks-per-node=1",
                             "#SBATCH --time=01:00:00", "#SBATCH --no-requeue", "srun --kill-on-bad-exit=1 "})
      QVERIFY2(d->script().contains(line), qPrintable(QString(line) + " missing from:\n" + d->script()));
    const QString shown = d->script();
    QCOMPARE(queue(), QString());  // shown, not queued
    QVERIFY(submit->isEnabled());
    RunController* rc = w.runController();
    submit->click();
    QTRY_VERIFY_WITH_TIMEOUT(rc->slurmJob() > 0, 60000);
    const qint64 job = rc->slurmJob();
    QCOMPARE(queue(), QString::number(job));
    const RunFolder folder = find_run_folder(rc->runUid().toStdString());
    QCOMPARE(QString::fromStdString(read_file(folder.path + "/job.sh")), shown);  // the job is the script shown

    QTRY_VERIFY_WITH_TIMEOUT(w.runStatus()->stateText().contains("pending: PartitionDown"), 60000);
    QVERIFY2(w.runStatus()->stateText().startsWith(QString("Slurm job %1: ").arg(job)),
             qPrintable(w.runStatus()->stateText()));
    QCOMPARE(w.livePlots()->trainPoints(), 0);
    int code = -1;
    slurm_->run("scontrol", {"update", "PartitionName=down", "State=UP"}, &code);
    QCOMPARE(code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->trainPoints() >= 3, 240000);  // first steps, live
    QTRY_VERIFY2_WITH_TIMEOUT(
        w.runStatus()->stateText().contains(QString("running (Slurm job %1 on localhost)").arg(job)),
        qPrintable(w.runStatus()->stateText()), 30000);
    QCOMPARE(QString::fromStdString(rc->runStart().run_uid), rc->runUid());
    QVERIFY(w.stopAction()->isEnabled());
    QVERIFY(!w.pauseAction()->isEnabled());

    w.stopAction()->trigger();  // = scancel
    QTRY_VERIFY_WITH_TIMEOUT(rc->hasEnded() && !rc->isActive(), 120000);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("stopped"));
    QTRY_COMPARE_WITH_TIMEOUT(jobStatus(job).value("state").toString(), QString("CANCELLED"), 60000);
    const std::vector<std::string> saved = list_checkpoints(folder.path);
    QVERIFY2(!saved.empty(), "no checkpoint in the run folder");
    QCOMPARE(saved.back(), checkpoint_path(folder.path, rc->lastStep().step));
    QCOMPARE(rc->lastCheckpoint(), QString::fromStdString(saved.back()));
    QTRY_VERIFY_WITH_TIMEOUT(w.resumeAction()->isEnabled(), 10000);  // resumable from it (the window updates on its signal)
    RunStore store;
    QCOMPARE(QString::fromStdString(store.run(store.find_uid(rc->runUid().toStdString())).status), QString("stopped"));
  }

  // `scontrol requeue` of a running --requeue job: the live page keeps the run (never idle, same uid), the
  // curves get one gap where it paused, the steps go on after the checkpoint's, and it ends finished as one
  // row in the store. The partition comes back as the one remembered for this computer.
  void requeueIsOneRunWithAGap() {
    const int steps = 300;
    MainWindow w;
    w.setupPanel()->setConfig(tinyRun(steps));
    SlurmDialog* d = openDialog(w, "", "01:00:00", true);
    QVERIFY(d);
    // Pre-filled with what the last submit here used (the CLI's slurm.json, read by `tokamak slurm info`).
    QCOMPARE(d->findChild<QComboBox*>("partition")->currentText(), QString("down"));
    d->findChild<QComboBox*>("partition")->setCurrentText("debug");
    showScript(d);
    QVERIFY2(d->script().contains("#SBATCH --requeue"), qPrintable(d->script() + d->message()));
    RunController* rc = w.runController();
    QSignalSpy states(rc, &RunController::stateChanged);
    QSignalSpy requeued(rc, &RunController::requeued);
    QSignalSpy ended(rc, &RunController::runEnded);
    d->findChild<QPushButton*>("submit")->click();
    QTRY_VERIFY_WITH_TIMEOUT(rc->slurmJob() > 0, 60000);
    const qint64 job = rc->slurmJob();
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step >= 10, 240000);
    int code = -1;
    slurm_->run("scontrol", {"requeue", QString::number(job)}, &code);
    QCOMPARE(code, 0);
    // The requeued job waits (BeginTime) before it may start again, shown on the live page; let it start now.
    QTRY_VERIFY_WITH_TIMEOUT(w.runStatus()->stateText().contains(QString("Slurm job %1, requeued: pending").arg(job)),
                             60000);
    QVERIFY(rc->isActive());
    QCOMPARE(ended.size(), 0);  // the stopped end is not the run's end
    slurm_->run("scontrol", {"update", "JobId=" + QString::number(job), "StartTime=now"});
    QTRY_VERIFY_WITH_TIMEOUT(requeued.size() == 1, 120000);
    const qint64 stoppedAt = requeued.first().first().toLongLong();
    QVERIFY(stoppedAt >= 10 && stoppedAt < steps);
    QTRY_VERIFY_WITH_TIMEOUT(rc->hasEnded() && !rc->isActive(), 300000);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("finished"));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(rc->lastStep().step, int64_t(steps));
    int idle = 0;  // idle only at the very end
    for (const QList<QVariant>& s : states)
      idle += s.first().value<RunController::State>() == RunController::State::Idle;
    QCOMPARE(idle, 1);
    QCOMPARE(states.last().first().value<RunController::State>(), RunController::State::Idle);
    MetricPlot* loss = w.livePlots()->lossPlot();
    QCOMPARE(loss->gapCount(0), 1);
    QCOMPARE(w.livePlots()->trainPoints(), steps);  // every step once: the resumed reader went on from its byte
    QCOMPARE(jobStatus(job).value("restarts").toInt(), 1);
    RunStore store;
    int same = 0;
    for (const RunListing& r : store.list_runs()) same += r.run.uid == rc->runUid().toStdString();
    QCOMPARE(same, 1);
    QCOMPARE(QString::fromStdString(store.run(store.find_uid(rc->runUid().toStdString())).status), QString("finished"));
  }

  // The login node over ssh: "Where" is an SSH host; Submit to Slurm is offered once the connection test has
  // found sbatch there; the job's run folder is the host's, followed (and recorded in this store) by `tokamak
  // remote attach`; Stop cancels the job there.
  void loginNodeOverSsh() {
    const std::string hostData = qEnvironmentVariable("XDG_DATA_HOME").toStdString() + "-host";
    make_dirs(hostData);
    test::SshdServer sshd(test::host_environment(
        hostData, {"SLURM_CONF=" + slurm_->path("slurm.conf"), "XDG_CONFIG_HOME=" + QString::fromStdString(hostData)}));
    QVERIFY2(sshd.ok(), qPrintable(sshd.error()));
    const SshOptions o = sshd.client();
    const QString sshConfig = sshd.writeSshConfig("slurm-login");
    qputenv("TOKAMAK_SSH_CONFIG", sshConfig.toLocal8Bit());
    {
      MainWindow w;
      w.setupPanel()->setConfig(tinyRun(100000));
      WhereBox* where = w.setupPanel()->whereBox();
      where->findChild<QComboBox*>("where")->setCurrentText("slurm-login");
      where->findChild<QLineEdit*>("hostTokamak")->setText(test::tokamak_bin());
      QAction* submit = w.slurmSubmit()->action();
      QVERIFY(!submit->isEnabled());
      QVERIFY2(submit->toolTip().contains("Test the connection to slurm-login first"), qPrintable(submit->toolTip()));
      QSignalSpy tested(where, &WhereBox::tested);
      where->findChild<QPushButton*>("testConnection")->click();
      QVERIFY(tested.wait(60000));
      QVERIFY2(tested.first().first().toBool(), qPrintable(where->resultText()));
      SlurmDialog* d = openDialog(w, "debug", "01:00:00", false);
      QVERIFY(d);
      QVERIFY(d->windowTitle().contains("slurm-login"));
      showScript(d);
      QVERIFY2(d->script().contains("#SBATCH --partition=debug"), qPrintable(d->message()));
      QVERIFY2(d->script().contains(QString::fromStdString(hostData)), "the run folder is the host's");
      RunController* rc = w.runController();
      d->findChild<QPushButton*>("submit")->click();
      QTRY_VERIFY_WITH_TIMEOUT(rc->slurmJob() > 0, 60000);
      const qint64 job = rc->slurmJob();
      QVERIFY(rc->isRemote());
      QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->trainPoints() >= 3, 240000);
      QTRY_VERIFY2_WITH_TIMEOUT(
          w.runStatus()->stateText().contains(QString("running (Slurm job %1 on localhost)").arg(job)),
          qPrintable(w.runStatus()->stateText()), 30000);
      w.stopAction()->trigger();  // scancel on the login node
      QTRY_VERIFY_WITH_TIMEOUT(rc->hasEnded() && !rc->isActive(), 120000);
      QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("stopped"));
      QTRY_COMPARE_WITH_TIMEOUT(jobStatus(job).value("state").toString(), QString("CANCELLED"), 60000);
      // The run's folder and checkpoint are the host's; this store recorded it through the reader.
      const QDir runs(QString::fromStdString(hostData) + "/tokamak/checkpoints");
      const QStringList mine = runs.entryList({"*-" + rc->runUid().left(8)}, QDir::Dirs);
      QCOMPARE(mine.size(), 1);
      const std::string folder = runs.filePath(mine.first()).toStdString();
      QVERIFY(!list_checkpoints(folder).empty());
      RunStore store;
      const int64_t id = store.find_uid(rc->runUid().toStdString());
      QVERIFY(id > 0);
      QCOMPARE(QString::fromStdString(store.run(id).status), QString("stopped"));
    }
    SshOptions shared = o;  // the CLI's shared connection (cache_dir()/ssh), closed before sshd goes
    shared.control_dir = cache_dir() + "/ssh";
    shared.config_file = sshConfig.toStdString();
    RemoteHost(parse_ssh_target("slurm-login"), shared).close();
    qunsetenv("TOKAMAK_SSH_CONFIG");
  }
};

QTEST_MAIN(TestStudioSlurm)
#include "test_studio_slurm.moc"
