// Signals and live runs, sent for real to a child `tokamak train`: SIGTERM, SIGHUP and SIGINT end a run the
// way Stop does (status `stopped` in the store, a checkpoint on disk), a second signal ends it at once, a
// reader of --json that goes away does not end the run, and a run still being trained cannot be resumed by a
// second process; `bench` stops its ladder at the rung a signal ends.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

#include "tests/support/cli_runner.h"
#include "tests/support/tiny.h"

namespace {

// A model small enough that a step takes milliseconds, and enough steps that only a signal ends the run.
QStringList tinyRun(const QString& db, int steps) {
  return QStringList{"train", "--json", "--db", db} +
         tokamak::test::set_args(tokamak::test::quiet_run_overrides("", steps));
}

// Checkpoints go to XDG_DATA_HOME: a scratch folder, not the user's.
void start(QProcess& p, const QString& program, const QStringList& args, const QString& dataHome) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("XDG_DATA_HOME", dataHome);
  p.setProcessEnvironment(env);
  p.start(program, args);
}

// Reads --json events from a running process until one of kind `until` arrives (or the process ends).
QList<QJsonObject> readUntil(QProcess& p, const QString& until, QList<QJsonObject>* seen = nullptr) {
  QList<QJsonObject> events;
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < 120000) {
    while (p.canReadLine()) {
      QJsonObject e = QJsonDocument::fromJson(p.readLine()).object();
      events << e;
      if (e["event"].toString() == until) {
        if (seen) *seen << events;
        return events;
      }
    }
    if (p.state() == QProcess::NotRunning) break;
    p.waitForReadyRead(1000);
  }
  if (seen) *seen << events;
  return events;
}

// The run as the store exported it (`tokamak runs export --format json`).
QJsonObject storedRun(const QString& db) {
  const QJsonArray runs = tokamak::test::run_tokamak({"runs", "export", "--db", db, "--format", "json"}, {}, 60000)
                              .json()["runs"]
                              .toArray();
  return runs.isEmpty() ? QJsonObject() : runs.last().toObject();
}

}  // namespace

class TestSignals : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY2(QFile::exists(tokamak::test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    QVERIFY(dir_.isValid());
  }

  void stopSignalEndsTheRunLikeStop_data() {
    QTest::addColumn<int>("sig");
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGHUP") << int(SIGHUP);
    QTest::newRow("SIGINT") << int(SIGINT);
  }
  void stopSignalEndsTheRunLikeStop() {
    QFETCH(int, sig);
    const QString db = dir_.filePath(QString("stop_%1.db").arg(sig));
    QProcess p;
    start(p, tokamak::test::tokamak_bin(), tinyRun(db, 100000), dir_.path());
    QVERIFY(p.waitForStarted());
    QVERIFY2(!readUntil(p, "step").isEmpty(), "no step event before the signal");
    QCOMPARE(::kill(static_cast<pid_t>(p.processId()), sig), 0);
    QList<QJsonObject> events;
    readUntil(p, "end", &events);
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    QString checkpoint;
    for (const QJsonObject& e : events)
      if (e["event"] == "checkpoint") checkpoint = e["path"].toString();
    QCOMPARE(events.last()["event"].toString(), QString("end"));
    QCOMPARE(events.last()["status"].toString(), QString("stopped"));
    QVERIFY2(!checkpoint.isEmpty() && QFile::exists(checkpoint), qPrintable(checkpoint));
    const QJsonObject run = storedRun(db);
    QCOMPARE(run["status"].toString(), QString("stopped"));
    QVERIFY(run["checkpoints"].toArray().size() >= 1);
  }

  void secondSignalEndsAtOnce() {
    QProcess p;
    start(p, tokamak::test::tokamak_bin(), tinyRun(dir_.filePath("twice.db"), 100000), dir_.path());
    QVERIFY(p.waitForStarted());
    QVERIFY(!readUntil(p, "step").isEmpty());
    // Two different signals: two of the same kind sent together may be merged into one by the kernel.
    QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGTERM), 0);
    QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGHUP), 0);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);  // ended by the signal itself, not by finishing the run
  }

  // `tokamak train --json | head -n 1`: head exits after the first line, every later write fails with EPIPE.
  void brokenStdoutDoesNotEndTheRun() {
    const QString db = dir_.filePath("pipe.db"), errFile = dir_.filePath("pipe.err");
    QStringList quoted;
    for (const QString& a : QStringList{tokamak::test::tokamak_bin()} + tinyRun(db, 40)) quoted << "'" + a + "'";
    const QString pipeline = quoted.join(' ') + " 2>'" + errFile + "' | head -n 1; echo \"exit=${PIPESTATUS[0]}\" >&2";
    QProcess sh;
    start(sh, "bash", {"-c", pipeline}, dir_.path());
    QVERIFY(sh.waitForFinished(300000));
    const QString out = QString::fromUtf8(sh.readAllStandardOutput()),
                  err = QString::fromUtf8(sh.readAllStandardError());
    QCOMPARE(out.count('\n'), 1);
    QVERIFY2(err.contains("exit=0"), qPrintable(err));
    QFile log(errFile);
    QVERIFY(log.open(QIODevice::ReadOnly));
    const QByteArray engineErr = log.readAll();
    QVERIFY2(engineErr.contains("stdout was closed"), engineErr.constData());  // the pipe did break mid-run
    const QJsonObject run = storedRun(db);
    QCOMPARE(run["status"].toString(), QString("finished"));
    QCOMPARE(run["metrics"].toArray().last().toObject()["step"].toInt(), 40);
  }

  void resumingALiveRunIsRefused() {
    const QString db = dir_.filePath("live.db");
    QProcess first;
    start(first, tokamak::test::tokamak_bin(),
          // Keep every checkpoint: the one the second process resumes from must still exist when it looks,
          // however many steps the first run has taken by then (the default keeps the newest 3).
          tinyRun(db, 100000) << "--set"
                              << "checkpoint.every=2"
                              << "--set"
                              << "checkpoint.keep=0",
          dir_.path());
    QVERIFY(first.waitForStarted());
    const qint64 pid = first.processId();  // 0 once it has ended
    const QList<QJsonObject> events = readUntil(first, "checkpoint");
    QVERIFY(!events.isEmpty() && events.last()["event"] == "checkpoint");
    // The store commits about once a second: wait until the first run's row is there.
    QTRY_COMPARE_WITH_TIMEOUT(storedRun(db)["status"].toString(), QString("running"), 30000);
    QProcess second;
    start(second, tokamak::test::tokamak_bin(),
          tinyRun(db, 100000) << "--set"
                              << "checkpoint.resume=" + events.last()["path"].toString(),
          dir_.path());
    QVERIFY(second.waitForFinished(120000));
    const QString err = QString::fromUtf8(second.readAllStandardError()).trimmed().split('\n').last();
    ::kill(static_cast<pid_t>(pid), SIGTERM);
    QVERIFY(first.waitForFinished(120000));
    QCOMPARE(second.exitCode(), 1);
    QVERIFY2(err.contains("is still being trained by process " + QString::number(pid)), qPrintable(err));
    QVERIFY2(err.contains("hint:"), qPrintable(err));
    QCOMPARE(storedRun(db)["status"].toString(), QString("stopped"));  // the first run was left alone
  }
  // `bench` meets a stop signal as `train` does: the rung's run ends "stopped" in the store (not "crashed"), and
  // the ladder ends there, its table so far on stdout and a one-line error naming the rung.
  void stopSignalEndsABenchLadder() {
    const QString db = dir_.filePath("bench.db"), ladder = dir_.filePath("two-rungs.json");
    QFile f(ladder);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"({"name": "t", "rungs": [{"name": "one", "set": {}}, {"name": "two", "set": {}}]})");
    f.close();
    QProcess p;
    start(p, tokamak::test::tokamak_bin(),
          QStringList{"bench", "--ladder", ladder, "--steps", "1000000", "--warmup", "0", "--db", db} +
              tokamak::test::tiny_run_args({"train.batch_size=2", "sample.every=-1", "eval.every=0", "threads=1"}),
          dir_.filePath("bench-data"));
    QVERIFY(p.waitForStarted());
    QTRY_COMPARE_WITH_TIMEOUT(storedRun(db)["status"].toString(), QString("running"), 60000);
    ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
    QVERIFY(p.waitForFinished(60000));
    const QByteArray out = p.readAllStandardOutput(), err = p.readAllStandardError();
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() != 0, err.constData());
    QVERIFY2(err.contains("the ladder was stopped during rung 1 ('one')"), err.constData());
    QVERIFY2(out.contains("one") && out.contains("stopped") && !out.contains("two"), out.constData());
    QCOMPARE(storedRun(db)["name"].toString(), QString("t/one"));  // rung two never started
    QCOMPARE(storedRun(db)["status"].toString(), QString("stopped"));
  }
};

QTEST_GUILESS_MAIN(TestSignals)
#include "test_signals.moc"
