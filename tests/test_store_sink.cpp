// StoreSink under a live run: rows are visible to another connection while the run writes, a SIGKILL in
// the middle of a run loses no committed row and the run reads `crashed`, and ends are recorded as reported.
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/store/store_sink.h"
#include "engine/base/util/files.h"
#include "tests/test_store_fakes.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using namespace tokamak::test;

class TestStoreSink : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void rowsVisibleWhileRunning();
  void sigkillLosesNoCommittedRow();
  void endStatus_data();
  void endStatus();
  void badPathFailsBeforeTraining();
  void aStartRefusedByALockLeavesNoRun();
  void newMetricFlowsThrough();
};

void TestStoreSink::rowsVisibleWhileRunning() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  StoreSinkOptions opt;
  opt.commit_interval_s = 0.2;
  StoreSink sink(path, opt);
  sink.on_start(fake_start("live"));
  for (int i = 1; i <= 20; ++i) sink.on_step(fake_step(i));
  sink.on_eval(fake_eval(20, 3.25));
  sink.on_sample({20, "The", "The cat"});
  // A second connection, as the studio or `tokamak runs` would open: no flush, no end — only the timer.
  RunStore reader(path);
  int64_t id = sink.run_id();
  QVERIFY(id > 0);
  QTRY_COMPARE_WITH_TIMEOUT(reader.metrics(id).size(), size_t{20}, test::kPatienceMs);
  QTRY_COMPARE_WITH_TIMEOUT(reader.samples(id).size(), size_t{1}, test::kPatienceMs);
  QCOMPARE(reader.run(id).status, std::string("running"));
  QCOMPARE(reader.metrics(id).back()["val_loss"], 3.25);  // the eval merged into step 20's row
  double beat = reader.run(id).heartbeat;
  QTRY_VERIFY_WITH_TIMEOUT(reader.run(id).heartbeat > beat, test::kPatienceMs);  // beats with no events coming
  sink.on_end({"finished", "", 20, 20 * 1024, 2.0});
  QCOMPARE(reader.run(id).status, std::string("finished"));  // on_end waits for its commit
}

// The child records a run as fast as it can; the parent kills it once rows are visible.
static void child_run(const std::string& path, int ready_fd) {
  try {
    StoreSinkOptions opt;
    opt.commit_interval_s = 0.05;
    StoreSink sink(path, opt);
    sink.on_start(fake_start("killed"));
    char one = 1;
    if (::write(ready_fd, &one, 1) != 1) ::_exit(2);
    for (int64_t i = 1;; ++i) {
      sink.on_step(fake_step(i, 10000 + static_cast<double>(i)));
      if (i % 10 == 0) sink.on_eval(fake_eval(i, 1.0 / static_cast<double>(i)));
      if (i % 50 == 0) sink.on_checkpoint({i, "/ckpt/" + std::to_string(i)});
      ::usleep(300);
    }
  } catch (...) {
    ::_exit(3);
  }
}

void TestStoreSink::sigkillLosesNoCommittedRow() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  int fds[2];
  QVERIFY(::pipe(fds) == 0);
  pid_t child = ::fork();
  QVERIFY(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    child_run(path, fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  bool started = ::poll(&p, 1, 20000) == 1;
  char byte = 0;
  started = started && ::read(fds[0], &byte, 1) == 1;
  ::close(fds[0]);
  if (!started) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    QFAIL("the child did not start its run");
  }
  // Wait for several commits, then remember every row we saw.
  std::map<int64_t, std::pair<double, double>> seen;  // step -> (train loss, tok/s)
  {
    RunStore reader(path);
    QTRY_VERIFY_WITH_TIMEOUT(reader.metrics(1).size() >= 200, 20000);
    for (const MetricRow& r : reader.metrics(1)) seen[r.step] = {r["train_loss"], r["tok_s"]};
    QCOMPARE(reader.run(1).status, std::string("running"));
  }
  QTest::qWait(120);  // let the child be somewhere in the middle of a commit, or between two
  QCOMPARE(::kill(child, SIGKILL), 0);
  int status = 0;
  ::waitpid(child, &status, 0);  // reaped: a zombie's pid still answers kill(pid, 0)
  QVERIFY(WIFSIGNALED(status));

  RunStore store(path);  // opening is where the dead run is found
  QCOMPARE(store.db().query_int("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"),
           int64_t{1});
  RunInfo r = store.run(1);
  QCOMPARE(r.status, std::string("crashed"));
  QVERIFY(!r.error.empty());
  auto rows = store.metrics(1);
  QVERIFY(rows.size() >= seen.size());
  for (size_t i = 0; i < rows.size(); ++i) QCOMPARE(rows[i].step, int64_t(i + 1));  // contiguous from 1
  for (const auto& [step, v] : seen) {
    const MetricRow& row = rows.at(static_cast<size_t>(step - 1));
    QCOMPARE(row["train_loss"], v.first);
    QCOMPARE(row["tok_s"], v.second);
  }
  // The summary was committed with the rows, in the same transactions.
  auto listing = store.list_runs();
  QCOMPARE(listing.at(0).last_step, rows.back().step);
}

void TestStoreSink::endStatus_data() {
  QTest::addColumn<QString>("status");
  QTest::addColumn<QString>("error");
  QTest::newRow("finished") << "finished"
                            << "";
  QTest::newRow("stopped") << "stopped"
                           << "";
  QTest::newRow("failed") << "failed"
                          << "loss is NaN at step 3";
}

void TestStoreSink::endStatus() {
  QFETCH(QString, status);
  QFETCH(QString, error);
  QTemporaryDir dir;
  std::string path = db_in(dir);
  {
    StoreSink sink(path);
    sink.on_start(fake_start("e"));
    sink.on_step(fake_step(1));
    sink.on_end({status.toStdString(), error.toStdString(), 1, 1024, 0.1});
  }
  RunInfo r = RunStore(path).run(1);
  QCOMPARE(QString::fromStdString(r.status), status);
  QCOMPARE(QString::fromStdString(r.error), error);
  QVERIFY(r.ended > 0);
}

void TestStoreSink::badPathFailsBeforeTraining() {
  QTemporaryDir dir;
  std::string err = error_of([&] { StoreSink sink(db_in(dir, "missing/runs.db")); }).toStdString();
  QVERIFY2(err.find("cannot create run database") != std::string::npos, err.c_str());
}

// The store held by another writer past the busy timeout while a run starts: the run is refused (the user is told
// it did not start) and nothing of it is stored later, neither with the closing batch nor as "crashed".
void TestStoreSink::aStartRefusedByALockLeavesNoRun() {
  QTemporaryDir dir;
  const std::string path = db_in(dir);
  {
    StoreSink sink(path);
    Db other(path);
    other.exec("BEGIN IMMEDIATE");
    const QString err = error_of([&] { sink.on_start(fake_start("locked-out")); });
    QVERIFY2(err.contains("stayed locked"), qPrintable(err));
    other.exec("COMMIT");
    sink.on_step(fake_step(1));  // a trainer that went on anyway writes nothing either
  }
  QCOMPARE(RunStore(path).list_runs().size(), size_t{0});
}

// A metric the store has never seen, reported by a step: it is stored, summarised, exported in CSV and
// JSON (a count as an integer), survives export -> import -> export byte for byte, and `runs compare` and
// `runs show` list it — with no edit anywhere but where it was measured.
void TestStoreSink::newMetricFlowsThrough() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  {
    StoreSink sink(path);
    sink.on_start(fake_start("new-metric"));
    for (int i = 1; i <= 3; ++i) {
      StepEvent e = fake_step(i);
      e.metrics.add("brand_new_ratio", 0.25 * i);
      e.metrics.add_count("brand_new_count", 7 * i);
      sink.on_step(e);
    }
    sink.on_end({"finished", "", 3, 3 * 1024, 0.3});
  }
  RunStore store(path);
  auto keys = store.metric_keys();
  QVERIFY(std::find(keys.begin(), keys.end(), "brand_new_ratio") != keys.end());
  QCOMPARE(store.metrics(1).at(1)["brand_new_ratio"], 0.5);
  QCOMPARE(store.metrics(1).at(2)["train_loss"], 10.0 / 4);  // the step's "loss" keeps its stored name
  bool summarised = false;
  for (const MetricSummary& m : store.summary(1))
    if (m.metric == "brand_new_count") summarised = m.n == 3 && m.max == 21 && m.last_step == 3;
  QVERIFY(summarised);
  std::ostringstream csv, json;
  export_runs(store, {}, ExportFormat::csv, csv);
  export_runs(store, {}, ExportFormat::json, json);
  QVERIFY2(csv.str().find("\nnew-metric,2,brand_new_ratio,0.5\n") != std::string::npos, csv.str().c_str());
  QVERIFY2(csv.str().find("\nnew-metric,3,brand_new_count,21\n") != std::string::npos, csv.str().c_str());
  QVERIFY2(json.str().find("\"brand_new_count\":14") != std::string::npos, json.str().c_str());
  write_file_atomically(db_in(dir, "e.json"), json.str());
  RunStore other(db_in(dir, "other.db"));
  import_runs(other, db_in(dir, "e.json"));
  std::ostringstream again;
  export_runs(other, {}, ExportFormat::json, again);
  QCOMPARE(again.str(), json.str());

  if (!path_exists(test::tokamak_bin().toStdString())) return;  // the CLI half needs the tokamak binary
  std::string out;
  QCOMPARE(tokamak_line("runs compare 1 --db " + path, &out), 0);
  QVERIFY2(out.find("brand_new_count") != std::string::npos && out.find("21") != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs show 1 --db " + path, &out), 0);
  QVERIFY2(out.find("brand_new_ratio") != std::string::npos, out.c_str());
}

QTEST_GUILESS_MAIN(TestStoreSink)
#include "test_store_sink.moc"
