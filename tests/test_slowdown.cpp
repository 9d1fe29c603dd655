// A real slowdown, caught and named: `tokamak train` pinned to one core (taskset, util-linux), four busy processes
// started on that core beside it once its pace is known. Its tok/s falls to a fraction of its median and the run
// says so with what changed on the machine — other processes' cores —, not a guess; the busy processes gone, it
// is back at its usual pace. Run alone (RUN_SERIAL): another suite busy on the machine would change what it sees.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <signal.h>

#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

class TestSlowdown : public QObject {
  Q_OBJECT

  QProcess run_;
  QByteArray out_;
  QList<QProcess*> busy_;

  // The run's --json lines of event KIND seen so far.
  QList<QJsonObject> events(const char* kind) {
    out_ += run_.readAllStandardOutput();
    QList<QJsonObject> found;
    for (const QByteArray& line : out_.split('\n')) {
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      if (o["event"].toString() == kind) found << o;
    }
    return found;
  }
  bool waitFor(const char* kind, qsizetype count, int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (events(kind).size() < count && t.elapsed() < timeout_ms && run_.state() != QProcess::NotRunning)
      run_.waitForReadyRead(200);
    return events(kind).size() >= count;
  }
  void endBusy() {
    for (QProcess* p : busy_) p->kill(), p->waitForFinished(5000), delete p;
    busy_.clear();
  }

 private Q_SLOTS:
  void initTestCase() {
    if (QStandardPaths::findExecutable("taskset").isEmpty()) QFAIL("needs util-linux's taskset (scripts/setup.sh installs it)");
  }
  void cleanup() {
    endBusy();
    if (run_.state() != QProcess::NotRunning) run_.kill(), run_.waitForFinished(10000);
  }

  void busyProcessesOnItsCoreAreNamed() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    // Reports about half a second apart on this 2-core Xeon, so that each one's share of the machine is measured over a while.
    run_.start("taskset", QStringList{"-c", "0", test::tokamak_bin(), "train", "--no-store", "--json"} +
                              test::set_args(test::quiet_run_overrides(
                                  env.corpus_excerpt(60000), 100000,
                                  {"train.batch_size=8", "train.log_every=8", "health.slowdown_fraction=0.6",
                                   "health.slowdown_reports=3"})));
    QVERIFY(run_.waitForStarted());
    QVERIFY2(waitFor("step", 8, 4 * test::kPatienceMs), run_.readAllStandardError().constData());
    QVERIFY2(events("slowdown").isEmpty(), "a slowdown before anything ran beside the run");
    for (int i = 0; i < 4; ++i) {
      auto* p = new QProcess;
      p->start("taskset", {"-c", "0", "sh", "-c", "while :; do :; done"});
      QVERIFY(p->waitForStarted());
      busy_ << p;
    }
    const bool slowed = waitFor("slowdown", 1, 2 * test::kPatienceMs);
    const qsizetype steps = events("step").size();
    endBusy();
    QVERIFY2(slowed, run_.readAllStandardError().constData());
    const QString said = events("slowdown").first()["message"].toString();
    QVERIFY2(said.contains(QRegularExpression("^\\d+ tok/s is \\d+% of the run's median \\d+ for 3 reports: ")), qPrintable(said));
    QVERIFY2(said.contains(QRegularExpression("other processes use [0-9.]+ cores \\([0-9.]+ before\\)")),
             qPrintable(said));
    // Alone again: its reports come back to its usual pace, and nothing more is said.
    QVERIFY(waitFor("step", steps + 8, 4 * test::kPatienceMs));
    const QList<QJsonObject> all = events("step");
    QVERIFY2(all.last()["tok_s"].toDouble() > 0.6 * all[5]["tok_s"].toDouble(), qPrintable(said));
    QCOMPARE(events("slowdown").size(), qsizetype(1));
  }
};

QTEST_GUILESS_MAIN(TestSlowdown)
#include "test_slowdown.moc"
