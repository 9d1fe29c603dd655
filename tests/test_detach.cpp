// Runs owned by the machine they train on, through the real CLI: `tokamak train --detach` returns at once
// and the run goes on in a session of its own; its journal holds every --json line; `runs follow` prints it
// from any byte offset until the run has ended; `runs control` pauses, resumes, samples and stops it through
// the run folder; `runs list --json` shows its state; a killed run is reported crashed with its last error
// line; and a full disk under the journal ends the run cleanly with one line.
#include <QJsonDocument>
#include <QJsonObject>
#include <QDir>
#include <QDirIterator>
#include <QProcess>
#include <QtTest>

#include <signal.h>
#include <unistd.h>

#include "engine/base/run/run_folder.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

QStringList runArgs(const std::string& data, int steps, const std::vector<std::string>& more = {}) {
  return QStringList{"train", "--no-store"} + test::set_args(test::quiet_run_overrides(data, steps, more));
}

QJsonObject detached(const QStringList& args) {
  const test::CliResult r = test::run_tokamak(QStringList(args) << "--detach"
                                                                << "--json",
                                              {}, 60000);
  if (r.code != 0) qWarning("detach failed: %s", r.err.constData());
  return QJsonDocument::fromJson(r.out).object();
}

QByteArray journalOf(const QJsonObject& run) {
  QFile f(run["folder"].toString() + "/events.jsonl");
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Waits until the journal holds a line with "event":"KIND" (true) or the timeout passes.
bool waitForEvent(const QJsonObject& run, const QString& kind, int timeout_ms = 120000, int after = 0) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < timeout_ms) {
    if (journalOf(run).mid(after).contains(QByteArray("\"event\":\"") + kind.toUtf8() + "\"")) return true;
    QThread::msleep(50);
  }
  return false;
}

QString stateOf(const QString& uid) {
  test::CliResult r = test::run_tokamak({"runs", "list", "--json"});
  for (const QByteArray& line : r.out.split('\n')) {
    QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o["run_uid"].toString() == uid) return o["state"].toString();
  }
  return "absent";
}

QString lastEvent(const QByteArray& journal) {
  QList<QByteArray> lines = journal.trimmed().split('\n');
  return QJsonDocument::fromJson(lines.last()).object()["event"].toString();
}

}  // namespace

class TestDetach : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;

 private Q_SLOTS:
  // A run a failed test left training is ended by pid before its scratch folder goes (run_reaper.h): each
  // test's ScratchEnv is made here, so it outlives the test function.
  void init() { env_ = std::make_unique<test::ScratchEnv>(); }
  void cleanup() {
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    env_.reset();
  }

  void detachReturnsAtOnceAndFollowPrintsTheWholeJournal() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    const std::string data = env.corpus_excerpt(20000);
    // A run far too long to end by itself here: when detach returns, its journal has no end yet, however busy
    // the machine (with 40 steps, a loaded machine once let the run finish before detach's own exit was read).
    QJsonObject run = detached(runArgs(data, 1000000));
    QVERIFY2(!journalOf(run).contains("\"event\":\"end\""), "detach must not wait for the run");
    const QString uid = run["run_uid"].toString();
    QCOMPARE(uid.size(), 16);
    QVERIFY(run["pid"].toInt() > 0);
    QVERIFY(QFileInfo(run["folder"].toString() + "/run.json").exists());
    // The detached run is not our child: its session is its own.
    QCOMPARE(getsid(run["pid"].toInt()), pid_t(run["pid"].toInt()));

    // Three steps, then a stop: follow prints everything up to the end, and returns when the run ends.
    QVERIFY(waitForEvent(run, "step"));
    QTRY_VERIFY_WITH_TIMEOUT(journalOf(run).count("\"event\":\"step\"") >= 3, test::kPatienceMs);
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    test::CliResult follow = test::run_tokamak({"runs", "follow", uid});
    QVERIFY2(follow.code == 0, follow.err.constData());
    const QByteArray journal = journalOf(run);
    QCOMPARE(follow.out, journal);  // byte for byte: the whole journal, each line once
    QCOMPARE(lastEvent(journal), QString("end"));
    QVERIFY(journal.contains("\"event\":\"start\""));
    QVERIFY(journal.count("\"event\":\"step\"") >= 3);
    QVERIFY(QFileInfo(run["folder"].toString() + "/exit").exists());
    QCOMPARE(stateOf(uid), QString("stopped"));

    // From a byte offset in the middle: exactly the rest.
    const int middle = journal.indexOf('\n', journal.size() / 2) + 1;
    test::CliResult rest = test::run_tokamak({"runs", "follow", uid.left(6), "--from", QString::number(middle)});
    QCOMPARE(rest.code, 0);
    QCOMPARE(rest.out, journal.mid(middle));
  }

  void controlPausesResumesSamplesAndStops() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    QJsonObject run = detached(runArgs(env.corpus_excerpt(20000), 1000000));
    const QString uid = run["run_uid"].toString();
    QVERIFY(waitForEvent(run, "step"));
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "pause"}).code, 0);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(uid), QString("paused"), test::kPatienceMs);
    QThread::msleep(500);  // the step in flight ends
    const QByteArray held = journalOf(run);
    QThread::msleep(700);
    QCOMPARE(journalOf(run).size(), held.size());  // paused: no more steps
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "resume"}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(journalOf(run).size() > held.size(), test::kPatienceMs);
    QCOMPARE(stateOf(uid), QString("running"));
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "sample"}).code, 0);
    QVERIFY(waitForEvent(run, "sample", 60000));
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    test::CliResult follow = test::run_tokamak({"runs", "follow", uid});
    QVERIFY2(follow.code == 0, follow.err.constData());
    const QByteArray journal = journalOf(run);
    QVERIFY(journal.contains("\"event\":\"checkpoint\""));  // stop = checkpoint, then end
    QVERIFY(journal.contains("\"status\":\"stopped\""));
    QCOMPARE(stateOf(uid), QString("stopped"));
    // An ended run takes no commands: one line that says so.
    test::CliResult late = test::run_tokamak({"runs", "control", uid, "stop"});
    QCOMPARE(late.code, 1);
    QVERIFY2(late.err.contains("is not running (it ended stopped)") && late.err.count('\n') == 1, late.err.constData());
    test::CliResult bad = test::run_tokamak({"runs", "control", uid, "explode"});
    QVERIFY2(bad.code == 1 && bad.err.contains("use pause, resume, stop or sample"), bad.err.constData());
  }

  // A stop sent as soon as the run is there, while its engine is still loading, is taken when it starts: only
  // commands older than the run's process (an earlier process of a resumed run) are dropped. (The queue in the
  // studio lost such stops: a test waited on a run that never stopped.)
  void aStopSentWhileTheEngineLoadsIsTaken() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    QJsonObject run = detached(runArgs(env.corpus_excerpt(20000), 1000000));
    const QString uid = run["run_uid"].toString();
    QVERIFY(!uid.isEmpty());
    const bool loading = !journalOf(run).contains("\"event\":\"step\"");
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    // It ends at once, stopped — also when the stop finds it still tokenizing its data.
    test::CliResult follow = test::run_tokamak({"runs", "follow", uid}, {}, 4 * test::kPatienceMs);
    QVERIFY2(follow.code != -1, "the run did not stop: the stop was lost");
    QVERIFY2(follow.code == 0, follow.err.constData());
    QCOMPARE(stateOf(uid), QString("stopped"));
    if (!loading) qWarning("the run had stepped before the stop was sent: this pass did not test the window");
  }

  // A stop while the run still tokenizes a large corpus cancels the tokenizing and ends the run stopped (not
  // failed), before step 1, and leaves no tokenized cache half-written.
  void aStopWhileTokenizingEndsStopped() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    const std::string excerpt = read_file(env.corpus_excerpt(1 << 20));
    const std::string big = env.path("big.txt");
    {
      std::string text;
      // ~192 MB: far more tokenizing than a stop takes to arrive, also on a loaded machine (at 48 MB, with the
      // suites four at once beside a build, the tokenizing once ended before the stop came). The stop cancels
      // it, so the size costs only the writing.
      for (int i = 0; i < 192; ++i) text += excerpt;
      write_file_atomically(big, text);
    }
    QJsonObject run = detached(runArgs(big, 1000));
    const QString uid = run["run_uid"].toString();
    QVERIFY(waitForEvent(run, "progress"));
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    test::CliResult follow = test::run_tokamak({"runs", "follow", uid}, {}, 4 * test::kPatienceMs);
    QVERIFY2(follow.code == 0, follow.err.constData());
    QCOMPARE(stateOf(uid), QString("stopped"));
    QVERIFY2(!journalOf(run).contains("\"event\":\"step\""), "it trained: the stop came after the tokenizing");
    QVERIFY2(!journalOf(run).contains("\"status\":\"failed\""), qPrintable(journalOf(run)));
    // Nothing of the cancelled tokenizing is kept: no shard anywhere in the dataset cache.
    QDirIterator it(QString::fromStdString(datasets_dir()), QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
      const QString f = it.next();
      QVERIFY2(!f.endsWith(".bin"), qPrintable(f));
    }
  }

  void killedRunIsReportedCrashed() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    QJsonObject run = detached(runArgs(env.corpus_excerpt(20000), 1000000));
    const QString uid = run["run_uid"].toString();
    QVERIFY(waitForEvent(run, "step"));
    QCOMPARE(stateOf(uid), QString("running"));
    QCOMPARE(::kill(run["pid"].toInt(), SIGKILL), 0);
    test::CliResult follow = test::run_tokamak({"runs", "follow", uid}, {}, 30000);
    QCOMPARE(follow.code, 1);
    QVERIFY2(follow.err.contains("crashed (it ended without an end event)"), follow.err.constData());
    QCOMPARE(follow.err.count('\n'), 1);
    QCOMPARE(follow.out, journalOf(run));  // everything written before the kill was printed first
    QCOMPARE(stateOf(uid), QString("crashed"));
  }

  void fullDiskEndsTheRunWithOneLine() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    // The run's uid is fixed (as the launcher fixes it for its ranks), so its journal can be /dev/full.
    const std::string uid = "f011d15cf011d15c";
    const RunFolder f{run_folder_path("full", uid)};
    make_dirs(f.path);
    QVERIFY(QFile::link("/dev/full", QString::fromStdString(f.journal())));
    const test::CliResult r =
        test::run_tokamak(runArgs(env.corpus_excerpt(20000), 1000000) << "--name"
                                                                      << "full",
                          test::environment_with({"TOKAMAK_RUN_UID=" + QString::fromStdString(uid)}));
    QCOMPARE(r.code, 1);
    QCOMPARE(r.err.count("the run journal cannot be written: the disk is full"), 1);
    QVERIFY2(r.err.contains("(writing " + QByteArray::fromStdString(f.journal()) + ")"), r.err.right(300).constData());
    // The disk filled before step 1 here (its first line is the tokenizer's progress), so there is no step
    // to checkpoint; the run did not hang and says how it ended.
    QVERIFY(read_file(f.exit_file()).find("\"failed\"") != std::string::npos);
  }

  void dataParallelRunKeepsOneJournal() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    // The launcher owns the folder (pid, exit, control); rank 0 writes the journal; both name the same run.
    QJsonObject run = detached(runArgs(env.corpus_excerpt(20000), 12) << "--gpus"
                                                                      << "2");
    test::CliResult follow = test::run_tokamak({"runs", "follow", run["run_uid"].toString()});
    QVERIFY2(follow.code == 0, follow.err.constData());
    const QByteArray journal = journalOf(run);
    QCOMPARE(journal.count("\"event\":\"start\""), 1);
    QCOMPARE(journal.count("\"event\":\"step\""), 12);
    QVERIFY(journal.contains("\"run_uid\":\"" + run["run_uid"].toString().toUtf8() + "\""));
    QVERIFY(journal.contains("\"world_size\":2"));
    QCOMPARE(stateOf(run["run_uid"].toString()), QString("finished"));
  }

  // A follower says when its run has stepped no more for health.stall_factor × its usual time between reports (at
  // least health.stall_min_s), and when it steps again: the run's own process, stopped, cannot say it.
  void aStoppedEngineIsStalledAndGoesOn() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    QJsonObject run = detached(
        runArgs(env.corpus_excerpt(20000), 1000000, {"health.stall_factor=5", "health.stall_min_s=5"}));
    const QString uid = run["run_uid"].toString();
    const pid_t pid = run["pid"].toInt();
    QTRY_VERIFY_WITH_TIMEOUT(journalOf(run).count("\"event\":\"step\"") >= 5, test::kPatienceMs);
    QProcess follower;
    follower.start(test::tokamak_bin(), {"runs", "follow", uid});
    QVERIFY(follower.waitForStarted());
    QByteArray out;
    const auto read = [&] { return out += follower.readAllStandardOutput(), out; };
    QTRY_VERIFY_WITH_TIMEOUT(read().count("\"event\":\"step\"") >= 5, test::kPatienceMs);
    QVERIFY2(!out.contains("\"event\":\"stalled\""), out.constData());  // stepping: not stalled
    QCOMPARE(::kill(pid, SIGSTOP), 0);
    QTRY_VERIFY_WITH_TIMEOUT(read().contains("\"event\":\"stalled\""), 60000);
    const QByteArray stalled = out;
    QCOMPARE(::kill(pid, SIGCONT), 0);
    QTRY_VERIFY_WITH_TIMEOUT(read().mid(stalled.size()).contains("\"event\":\"stall_over\""), 60000);
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    QVERIFY(follower.waitForFinished(120000));
    read();
    QCOMPARE(follower.exitCode(), 0);
    QCOMPARE(out.count("\"event\":\"stalled\""), 1);  // said once, however long the silence
    const QByteArray err = follower.readAllStandardError();
    QVERIFY2(err.contains("no step for") && err.contains("health.stall_factor"), err.constData());
    // The journal is the run's own record: the follower's verdicts are not in it.
    QVERIFY(!journalOf(run).contains("\"event\":\"stalled\""));
  }

  void detachRefusesWhatCannotWork() {
    test::ScratchEnv& env = *env_;
    QVERIFY(env.ok());
    test::CliResult r = test::run_tokamak(runArgs(env.corpus_excerpt(20000), 5) << "--detach"
                                                                                << "--control");
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("--detach and --control do not go together") && r.err.count('\n') == 1, r.err.constData());
    // A config problem is reported before detaching, by the command that was typed.
    r = test::run_tokamak(QStringList{"train", "--detach", "--set", "train.steps=-3"});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("train.steps"), r.err.constData());
    r = test::run_tokamak({"runs", "follow", "ffffffff"});
    QVERIFY2(r.code == 1 && r.err.contains("runs list --json"), r.err.constData());
  }
};

QTEST_GUILESS_MAIN(TestDetach)
#include "test_detach.moc"
