// The studio driving a real SSH host (Debian's sshd on loopback, tests/support/sshd_server.h): "Where" lists
// the Hosts of the ssh config and tests the connection (version, devices, free disk; a bad host text is one
// line); a run started there trains with its events arriving live through the local event path; the ssh
// client killed mid-run shows "disconnected — retrying" until the events flow again; then the ssh client and
// its ControlMaster are killed and the studio (MainWindow, RunController) is destroyed while disconnected: the
// run trains on on the host, a new studio lists the live runs of its known hosts and re-attaches by itself,
// replaying the whole history; at the end the local store holds exactly the events of the host's journal.
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include <csignal>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/base/run/journal.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/studio_host.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/live/live_runs.h"
#include "ui/samples/samples_panel.h"
#include "ui/remote/where_box.h"
#include "ui/live/run_controller.h"
#include "ui/setup/setup_panel.h"
#include "ui/status/run_status.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

// The live processes whose parent is pid and whose name is `name`.
QList<qint64> childrenNamed(qint64 pid, const QByteArray& name) {
  QList<qint64> out;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
    QFile f("/proc/" + entry + "/stat");
    if (entry.toLongLong() <= 0 || !f.open(QIODevice::ReadOnly)) continue;
    const QByteArray stat = f.readAll();
    const QByteArray comm = stat.mid(stat.indexOf('(') + 1, stat.lastIndexOf(')') - stat.indexOf('(') - 1);
    const QList<QByteArray> rest = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (rest.size() > 1 && rest[1].toLongLong() == pid && comm == name) out << entry.toLongLong();
  }
  return out;
}

// The live ssh processes (clients and ControlMaster) whose command line names the shared connection's folder.
QList<qint64> sshProcessesUsing(const QString& controlDir) {
  QList<qint64> out;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
    QFile comm("/proc/" + entry + "/comm"), cmdline("/proc/" + entry + "/cmdline");
    if (entry.toLongLong() <= 0 || !comm.open(QIODevice::ReadOnly) || comm.readAll().trimmed() != "ssh") continue;
    if (cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(controlDir.toUtf8())) out << entry.toLongLong();
  }
  return out;
}

}  // namespace

class TestStudioRemote : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SshHost> ssh_;
  std::string hostData_, data_;

  void chooseHost(MainWindow& w) { test::choose_host(w, "tokamak-test", test::tokamak_bin()); }

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    data_ = env_->corpus_excerpt(20000);
    // The studio uses the user's ssh config; this test gives it one of its own (TOKAMAK_SSH_CONFIG).
    ssh_ = std::make_unique<test::SshHost>(*env_, QStringList{}, "tokamak-test", "Host *.example\n  User x\n");
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    hostData_ = ssh_->data();
  }

  // A run a failed test left training on the host is ended here, by pid (run_reaper.h).
  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  void whereListsHostsAndTestsTheConnection() {
    MainWindow w;
    WhereBox* where = w.setupPanel()->whereBox();
    auto* combo = where->findChild<QComboBox*>("where");
    QVERIFY(combo->findText("tokamak-test") > 0);
    QCOMPARE(combo->findText("*.example"), -1);                               // patterns are not hosts
    QVERIFY(!where->findChild<QPushButton*>("testConnection")->isEnabled());  // this computer: nothing to test
    chooseHost(w);
    QCOMPARE(w.runController()->isRemote(), false);  // nothing started yet
    QSignalSpy tested(where, &WhereBox::tested);
    where->findChild<QPushButton*>("testConnection")->click();
    QVERIFY(tested.wait(60000));
    QVERIFY2(tested.first().first().toBool(), qPrintable(where->resultText()));
    QVERIFY2(where->resultText().startsWith("Tokamak " TOKAMAK_VERSION " · ") &&
                 where->resultText().contains(QRegularExpression(
                     "[0-9.]+ [kMGTP]?B free in " + QRegularExpression::escape(QString::fromStdString(hostData_)))),
             qPrintable(where->resultText()));
    // Tokamak missing there: one line that says so and how to install it.
    where->findChild<QLineEdit*>("hostTokamak")->setText("/nonexistent/tokamak");
    where->findChild<QPushButton*>("testConnection")->click();
    QVERIFY(tested.wait(60000));
    QVERIFY(!tested.last().first().toBool());
    QVERIFY2(
        where->resultText().contains("Tokamak is not installed on tokamak-test") && !where->resultText().contains('\n'),
        qPrintable(where->resultText()));
    combo->setCurrentText("me@");
    QVERIFY2(where->resultText().contains("is not an SSH host"), qPrintable(where->resultText()));
    // The choice comes back with the next studio.
    combo->setCurrentText("tokamak-test");
    MainWindow next;
    QCOMPARE(next.setupPanel()->whereBox()->host(), QString("tokamak-test"));
    QCOMPARE(next.setupPanel()->whereBox()->tokamakCommand(), QString("/nonexistent/tokamak"));
  }

  void runOnHostSurvivesDisconnectAndRestart() {
    Config c;
    apply_overrides(
        c, test::quiet_run_overrides(data_, 300, {"sample.every=25", "speed.precision=fp32", "name=remote-studio"}));
    auto w = std::make_unique<MainWindow>();
    chooseHost(*w);
    w->setupPanel()->setConfig(c);
    RunController* rc = w->runController();
    QSignalSpy connection(rc, &RunController::connectionChanged);
    w->startAction()->trigger();
    QVERIFY(rc->isRemote());
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step >= 5, 120000);  // live, through the local event path
    QTRY_VERIFY_WITH_TIMEOUT(w->livePlots()->trainPoints() >= 5 && w->samplesPanel()->sampleCount() > 0, 120000);
    const std::string uid = rc->runStart().run_uid;
    QCOMPARE(uid.size(), size_t(16));
    QVERIFY(rc->runStart().host.size() > 0);
    // The ssh client under `tokamak remote` dies, as with a dropped network.
    const QList<qint64> ssh = childrenNamed(rc->processId(), "ssh");
    QVERIFY(!ssh.isEmpty());
    for (qint64 pid : ssh) ::kill(static_cast<pid_t>(pid), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(connection.size() >= 1, 30000);
    QCOMPARE(connection.first().first().toBool(), false);
    QVERIFY2(w->runStatus()->stateText().contains("disconnected — retrying"), qPrintable(w->runStatus()->stateText()));
    const int64_t before = rc->lastStep().step;
    QTRY_VERIFY_WITH_TIMEOUT(connection.size() >= 2 && rc->lastStep().step > before, 60000);
    QCOMPARE(connection.last().first().toBool(), true);
    QVERIFY(!rc->hasEnded());

    // The connection dies for good (client and ControlMaster) and the studio goes with it: the run goes on on
    // the host, and the next studio finds it among its known hosts' live runs and follows it again.
    const QString controlDir = QString::fromStdString(cache_dir() + "/ssh/");
    QTRY_VERIFY_WITH_TIMEOUT(!sshProcessesUsing(controlDir).isEmpty(), test::kPatienceMs);
    for (qint64 pid : sshProcessesUsing(controlDir)) ::kill(static_cast<pid_t>(pid), SIGKILL);
    w.reset();
    QVERIFY(LiveRuns::knownHosts().contains("tokamak-test"));
    RemoteHost host = ssh_->by_alias(test::tokamak_bin().toStdString());
    bool live = false;
    for (const RemoteRun& r : host.runs(true)) live = live || r.uid == uid;
    QVERIFY2(live, "the run must go on training on the host");

    auto again = std::make_unique<MainWindow>();
    RunController* rc2 = again->runController();
    QTRY_VERIFY_WITH_TIMEOUT(rc2->isActive() && rc2->isRemote(), 60000);
    QCOMPARE(rc2->runUid(), QString::fromStdString(uid));
    QTRY_VERIFY_WITH_TIMEOUT(rc2->hasEnded(), 300000);
    QCOMPARE(QString::fromStdString(rc2->lastEnd().status), QString("finished"));
    QCOMPARE(rc2->lastStep().step, int64_t(300));
    QCOMPARE(again->livePlots()->trainPoints(), 300);  // the history before the re-attach replayed

    // The local store equals the host's journal: every step once, every sample once.
    std::string folder;
    for (const RemoteRun& r : host.runs(false))
      if (r.uid == uid) folder = r.folder;
    uint64_t next = 0;
    std::set<int64_t> steps;
    int samples = 0;
    for (const JournalLine& l : read_journal(folder + "/events.jsonl", 0, &next, 1 << 26)) {
      auto j = nlohmann::json::parse(l.text);
      if (j["event"] == "step") steps.insert(j["step"].get<int64_t>());
      samples += j["event"] == "sample";
    }
    QTRY_VERIFY_WITH_TIMEOUT(!again->runController()->isActive(), 30000);
    RunStore store;
    const int64_t id = store.find_uid(uid);
    QVERIFY(id > 0);
    QCOMPARE(store.metrics(id).size(), steps.size());
    QCOMPARE(int(store.samples(id).size()), samples);
    QCOMPARE(QString::fromStdString(store.run(id).status), QString("finished"));
  }

  // Two runs going on a known host: the next studio shows one and records the other in the background, so both
  // end with the local store equal to their journals though only one was ever on the live page.
  void everyLiveHostRunIsRecorded() {
    RemoteHost host = ssh_->by_alias(test::tokamak_bin().toStdString());
    std::vector<std::string> uids;
    for (const char* name : {"remote-a", "remote-b"}) {
      Config c;
      apply_overrides(c, test::quiet_run_overrides(data_, 150, {"speed.precision=fp32", std::string("name=") + name}));
      uids.push_back(host.start_run(config_to_json(c)).uid);
    }
    LiveRuns::rememberHost("tokamak-test", test::tokamak_bin());
    auto w = std::make_unique<MainWindow>();
    RunController* rc = w->runController();
    QTRY_VERIFY_WITH_TIMEOUT(rc->isActive() && rc->isRemote(), 60000);
    const QString shown = rc->runUid();
    QVERIFY(shown.toStdString() == uids[0] || shown.toStdString() == uids[1]);
    QTRY_VERIFY_WITH_TIMEOUT(host.runs(true).empty(), 300000);  // both trained to their end on the host
    QTRY_VERIFY_WITH_TIMEOUT(rc->hasEnded(), 60000);
    for (const std::string& uid : uids) {
      std::string folder;
      for (const RemoteRun& r : host.runs(false))
        if (r.uid == uid) folder = r.folder;
      uint64_t next = 0;
      std::set<int64_t> steps;
      for (const JournalLine& l : read_journal(folder + "/events.jsonl", 0, &next, 1 << 26)) {
        auto j = nlohmann::json::parse(l.text);
        if (j["event"] == "step") steps.insert(j["step"].get<int64_t>());
      }
      QCOMPARE(steps.size(), size_t(150));
      // The background recorder ends with its run; the store then holds every step once.
      QTRY_VERIFY_WITH_TIMEOUT(RunStore().find_uid(uid) > 0 &&
                                   RunStore().metrics(RunStore().find_uid(uid)).size() == steps.size() &&
                                   RunStore().run(RunStore().find_uid(uid)).status == "finished",
                               60000);
    }
  }
};

QTEST_MAIN(TestStudioRemote)
#include "test_studio_remote.moc"
