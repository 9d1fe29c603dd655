// The run store itself: migration from schemas 1 and 2 (exports byte-identical across it), summaries kept without
// reading metrics, crash detection, resume continuing a run, and the bad inputs (not a database, newer schema, unknown
// id, unwritable path).
#include <QTemporaryDir>
#include <QtTest>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <sstream>

#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/store/store_fs.h"
#include "engine/base/store/store_sink.h"
#include "engine/base/util/files.h"
#include "tests/test_store_fakes.h"

using namespace tokamak;
using namespace tokamak::test;

class TestStore : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void migrationFromVersion1();
  void exportsSurviveMigrationToV3_data();
  void exportsSurviveMigrationToV3();
  void summaryListsWithoutMetrics();
  void badInputs_data();
  void badInputs();
  void unknownRunId();
  void aKernelTableTheStoreRefusesIsAWarning();
  void crashDetection_data();
  void crashDetection();
  void resumeContinuesRun();
  void networkFileSystemsGetARollbackJournal();
};

// SQLite's WAL keeps its index in memory shared on one machine, and a Slurm sweep's store lies on a network file
// system where the batch hosts reach it: the store opened WAL there too. Network file systems are now told by
// their statfs magic and get a rollback journal, with a note. No network file system can be mounted here, so
// the local case runs for real and the network ones are their classification.
void TestStore::networkFileSystemsGetARollbackJournal() {
  QCOMPARE(network_file_system_name(0x6969), std::string("NFS"));
  QCOMPARE(network_file_system_name(0x0BD00BD0), std::string("Lustre"));
  QCOMPARE(network_file_system_name(0x47504653), std::string("GPFS"));
  QCOMPARE(network_file_system_name(static_cast<long>(0xFF534D42UL)), std::string("CIFS"));
  QCOMPARE(network_file_system_name(static_cast<long>(static_cast<int32_t>(0xFF534D42UL))), std::string("CIFS"));
  for (long local : {0xEF53L /* ext2/3/4 */, 0x01021994L /* tmpfs */, 0x58465342L /* XFS */, 0x9123683EL /* Btrfs */})
    QCOMPARE(network_file_system_name(local), std::string());
  QTemporaryDir dir;
  QCOMPARE(network_file_system_of(dir.path().toStdString()), std::string());
  RunStore store(db_in(dir));
  QCOMPARE(store.journal_note(), std::string());
  Stmt mode(store.db(), "PRAGMA journal_mode");
  QVERIFY(mode.step());
  QCOMPARE(mode.text(0), std::string("wal"));
}

void TestStore::migrationFromVersion1() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  {
    Db db(path);
    db.exec(schema_v1_sql());
    db.exec("PRAGMA user_version = 1");
    db.exec(
        "INSERT INTO runs (uid, name, status, created, updated, config_json) "
        "VALUES ('old', 'from v1', 'finished', 1.5, 2.5, '{\"a\":1}')");
    db.exec(
        "INSERT INTO metrics (run_id, step, tokens, train_loss, val_loss) VALUES "
        "(1, 1, 1024, 5.0, NULL), (1, 2, 2048, 4.0, 4.5), (1, 3, 3072, 4.25, 4.1)");
    db.exec("INSERT INTO samples (run_id, step, text, created) VALUES (1, 2, 'hello', 2.0)");
  }
  RunStore store(path);
  QCOMPARE(store.db().query_int("PRAGMA user_version"), int64_t{kSchemaVersion});
  RunInfo r = store.run(1);
  QCOMPARE(r.uid, std::string("old"));
  QCOMPARE(r.name, std::string("from v1"));
  QCOMPARE(r.config_json, std::string("{\"a\":1}"));
  QCOMPARE(r.tags_json, std::string("[]"));  // version 2 column, with its default
  auto rows = store.metrics(1);
  QCOMPARE(rows.size(), size_t{3});
  QCOMPARE(rows[1]["val_loss"], 4.5);
  QVERIFY(std::isnan(rows[0]["step_ms"]));  // never recorded in version 1
  QCOMPARE(store.samples(1).at(0).text, std::string("hello"));
  // The summary was back-filled from version 1's metrics.
  auto listing = store.list_runs();
  QCOMPARE(listing.size(), size_t{1});
  QCOMPARE(listing[0].last_step, int64_t{3});
  QCOMPARE(listing[0].train_loss, 4.25);
  QCOMPARE(listing[0].best_val_loss, 4.1);
  // And the migrated database takes new writes.
  MetricRow m;
  m.step = 4;
  m.set("step_ms", 12.5);
  store.transaction([&] { store.add_metrics(1, {m}); });
  QCOMPARE(store.metrics(1).back()["step_ms"], 12.5);
}

// tests/data/store_v2 holds a database written by the schema-2 store (as SQL) and what that store exported
// from it (tests/data/store_v2/generate.sh made both from commit 54cc30e). Migrated to today's version, the
// database keeps every value and exports the same bytes in every format (but for the two presentation changes
// generate.sh names: today's size formatter, and the config's keys under today's names).
void TestStore::exportsSurviveMigrationToV3_data() {
  QTest::addColumn<int>("format");
  QTest::addColumn<QString>("file");
  QTest::newRow("csv") << int(ExportFormat::csv) << "export.csv";
  QTest::newRow("json") << int(ExportFormat::json) << "export.json";
  QTest::newRow("md") << int(ExportFormat::md) << "export.md";
}

void TestStore::exportsSurviveMigrationToV3() {
  QFETCH(int, format);
  QFETCH(QString, file);
  const std::string data = std::string(TOKAMAK_SOURCE_DIR) + "/tests/data/store_v2/";
  QTemporaryDir dir;
  std::string path = db_in(dir);
  int64_t values = 0;
  {
    Db db(path);
    db.exec(read_file(data + "store_v2.sql"));
    QCOMPARE(db.query_int("PRAGMA user_version"), int64_t{2});
    std::string count = "SELECT 0";
    for (const char* col : {"tokens", "wall_s", "train_loss", "val_loss", "lr", "grad_norm", "tok_s", "mfu", "step_ms",
                            "mem_allocated", "mem_reserved", "mem_peak"})
      count += std::string(" + (SELECT count(") + col + ") FROM metrics)";
    values = db.query_int(count);
    QVERIFY(values > 500);  // 612: every metric of version 2, some sparse
  }
  RunStore store(path);
  QCOMPARE(store.db().query_int("PRAGMA user_version"), int64_t{kSchemaVersion});
  QCOMPARE(store.db().query_int("SELECT count(*) FROM metric_values"), values);
  std::ostringstream out;
  export_runs(store, {}, static_cast<ExportFormat>(format), out);
  const std::string expected = read_file(data + file.toStdString());
  QVERIFY(!expected.empty());
  QCOMPARE(out.str(), expected);
}

void TestStore::summaryListsWithoutMetrics() {
  QTemporaryDir dir;
  RunStore store(db_in(dir));
  int64_t id = 0;
  store.transaction([&] { id = store.begin_run(fake_start("s1"), now_seconds(), ::getpid()); });
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<MetricRow> rows;
    for (int i = 1; i <= 5; ++i) {
      MetricRow r;
      r.step = batch * 5 + i;
      r.set("train_loss", 10.0 - r.step);
      r.set("tok_s", 1000.0 * r.step);
      if (i == 5) r.set("val_loss", batch == 0 ? 3.0 : 3.5);
      rows.push_back(r);
    }
    store.transaction([&] { store.add_metrics(id, rows); });
  }
  auto sum = store.summary(id);
  QCOMPARE(sum.at(0).metric, std::string("train_loss"));  // in metric order
  QCOMPARE(sum[0].n, int64_t{10});
  QCOMPARE(sum[0].last, 0.0);
  QCOMPARE(sum[0].min, 0.0);
  QCOMPARE(sum[0].max, 9.0);
  // Drop the metrics table: a listing that still answers never read it.
  store.db().exec("DROP TABLE metric_values");
  auto l = store.list_runs();
  QCOMPARE(l.at(0).last_step, int64_t{10});
  QCOMPARE(l[0].train_loss, 0.0);
  QCOMPARE(l[0].best_val_loss, 3.0);
  QCOMPARE(l[0].tok_s, 10000.0);
  QCOMPARE(l[0].run.status, std::string("running"));
}

void TestStore::badInputs_data() {
  QTest::addColumn<QString>("kind");
  QTest::addColumn<QString>("message");
  QTest::newRow("text file") << "text"
                             << "is not a Tokamak run database (not an SQLite file)";
  QTest::newRow("another app's SQLite") << "foreign"
                                        << "is an SQLite database but not a Tokamak run database";
  QTest::newRow("newer schema")
      << "newer"
      << QString("was written by a newer Tokamak (version %1, schema 99; this is %1, schema %2), which this one cannot read")
             .arg(TOKAMAK_VERSION)
             .arg(kSchemaVersion);
  QTest::newRow("folder missing") << "nofolder"
                                  << "does not exist";
  QTest::newRow("parent is a file") << "parentfile"
                                    << "does not exist";
  QTest::newRow("path is a folder") << "folder"
                                    << "is a folder";
  QTest::newRow("--db that does not exist") << "missing"
                                            << "no run database at";
}

void TestStore::badInputs() {
  QFETCH(QString, kind);
  QFETCH(QString, message);
  QTemporaryDir dir;
  std::string path = db_in(dir);
  auto mode = RunStore::Mode::create;
  if (kind == "text") write_file_atomically(path, std::string(4096, 'x'));
  if (kind == "foreign") Db(path).exec("CREATE TABLE songs (title TEXT)");
  if (kind == "newer") {
    { RunStore s(path); }
    // A newer store that says no reader of this schema can read it (one that can is read, not written:
    // test_store_versions).
    Db(path).exec("PRAGMA user_version = 99; UPDATE store_info SET value = '99' WHERE key = 'min_reader'");
  }
  if (kind == "nofolder") path = db_in(dir, "no/such/folder/runs.db");
  if (kind == "parentfile") {
    write_file_atomically(db_in(dir, "file"), "x");
    path = db_in(dir, "file/runs.db");
  }
  if (kind == "folder") path = dir.path().toStdString();
  if (kind == "missing") mode = RunStore::Mode::existing;
  std::string before = path_exists(path) && !is_directory(path) ? read_file(path) : "";
  std::string err = error_of([&] { RunStore s(path, mode); }).toStdString();
  QVERIFY2(err.find(message.toStdString()) != std::string::npos, err.c_str());
  QVERIFY2(err.find("hint:") != std::string::npos, err.c_str());
  if (!before.empty()) QCOMPARE(read_file(path), before);  // nothing written to a file that is not ours
  if (kind == "missing") QVERIFY(!path_exists(path));
}

// `train --kernels` keeps its table once the run's writer has closed the store: a store locked then (a long import)
// is a line to print, never an error that would turn the finished run into a failed one.
void TestStore::aKernelTableTheStoreRefusesIsAWarning() {
  QTemporaryDir dir;
  const std::string path = db_in(dir);
  int64_t id = 0;
  {
    RunStore store(path);
    RunStart start;
    start.name = "profiled", start.config_json = "{}";
    id = store.begin_run(start, now_seconds(), ::getpid());
  }
  SpeedOfLightRecord record{1e12, 1e10, "measured", "measured", {{"matmul", 2.0, 10, 1e9, 0, 1.0, "compute"}}};
  {
    Db other(path);
    other.exec("BEGIN IMMEDIATE");
    std::string why;
    try {
      why = store_speed_of_light(path, id, record);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QVERIFY2(why.find("stayed locked") != std::string::npos, why.c_str());
    other.exec("COMMIT");
  }
  QCOMPARE(RunStore(path).speed_of_light(id).kinds.size(), size_t{0});
  QCOMPARE(store_speed_of_light(path, id, record), std::string());
  QCOMPARE(RunStore(path).speed_of_light(id).kinds.size(), size_t{1});
}

void TestStore::unknownRunId() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  RunStore store(path);
  store.transaction([&] { store.begin_run(fake_start("u"), 1, 1); });
  QCOMPARE(store.resolve("1"), int64_t{1});
  QCOMPARE(store.resolve("u"), int64_t{1});
  for (const char* key : {"42", "nope"}) {
    std::string err = error_of([&] { store.resolve(key); }).toStdString();
    QCOMPARE(QString::fromStdString(err), QString("no run %1 in %2 (hint: `tokamak runs list --db %2` shows the ids)")
                                              .arg(key, QString::fromStdString(path)));
  }
  QVERIFY(!error_of([&] { store.run(42); }).isEmpty());
}

void TestStore::crashDetection_data() {
  QTest::addColumn<bool>("same_host");
  QTest::addColumn<bool>("pid_alive");
  QTest::addColumn<double>("beat_age_s");
  QTest::addColumn<QString>("status");
  QTest::newRow("dead pid here") << true << false << 1.0 << "crashed";
  QTest::newRow("live pid here") << true << true << 1.0 << "running";
  QTest::newRow("live pid here, silent") << true << true << 600.0 << "crashed";
  QTest::newRow("other host, beating") << false << false << 1.0 << "running";
  QTest::newRow("other host, silent") << false << true << 600.0 << "crashed";
}

void TestStore::crashDetection() {
  QFETCH(bool, same_host);
  QFETCH(bool, pid_alive);
  QFETCH(double, beat_age_s);
  QFETCH(QString, status);
  pid_t pid = ::getpid();
  if (!pid_alive) {  // a pid that surely existed and is now gone: a reaped child
    pid = ::fork();
    if (pid == 0) ::_exit(0);
    ::waitpid(pid, nullptr, 0);
  }
  QTemporaryDir dir;
  RunInfo r;
  r.uid = "c";
  r.status = "running";
  r.created = r.updated = now_seconds() - 1000;
  r.heartbeat = now_seconds() - beat_age_s;
  r.host = same_host ? this_host() : "elsewhere.example";
  r.pid = pid;
  {
    RunStore store(db_in(dir));
    store.transaction([&] { store.insert_run(r); });
  }
  RunStore store(db_in(dir));
  QCOMPARE(QString::fromStdString(store.run(1).status), status);
  if (status == "crashed") QCOMPARE(store.run(1).ended, r.heartbeat);  // ended = last sign of life
}

void TestStore::resumeContinuesRun() {
  QTemporaryDir dir;
  std::string path = db_in(dir);
  {  // the first attempt checkpoints at 6, logs up to 10 and dies without an end event
    StoreSink sink(path);
    sink.on_start(fake_start("resumable", "long run"));
    for (int i = 1; i <= 10; ++i) sink.on_step(fake_step(i));
    sink.on_checkpoint({6, "/ckpt/step6.pt"});
  }
  QCOMPARE(RunStore(path).run(1).status, std::string("crashed"));
  RunStart again = fake_start("resumable", "");
  again.start_step = 6;
  {
    StoreSink sink(path);
    sink.on_start(again);
    for (int i = 7; i <= 12; ++i) {
      StepEvent e = fake_step(i, 10000, 1);
      e.wall_s = 0.1 * (i - 6);  // the trainer's clock restarts at the resume
      sink.on_step(e);
    }
    sink.on_end({"finished", "", 12, 12 * 1024, 0.6});
  }
  RunStore store(path);
  QCOMPARE(store.list_runs().size(), size_t{1});
  RunInfo r = store.run(1);
  QCOMPARE(r.status, std::string("finished"));
  QCOMPARE(r.name, std::string("long run"));  // kept: the resume gave no name
  auto rows = store.metrics(1);
  QCOMPARE(rows.size(), size_t{12});
  for (size_t i = 0; i < rows.size(); ++i) {
    QCOMPARE(rows[i].step, int64_t(i + 1));
    double attempt = rows[i].step > 6 ? 1 : 0;  // steps 7..10 of the lost attempt were replaced
    QCOMPARE(rows[i]["train_loss"], 10.0 / double(rows[i].step + 1) + attempt);
    if (i) QVERIFY(rows[i]["wall_s"] > rows[i - 1]["wall_s"]);  // one clock across the resume
  }
  QCOMPARE(store.checkpoints(1).size(), size_t{1});
  QCOMPARE(store.summary(1).at(2).metric, std::string("train_loss"));
  QCOMPARE(store.summary(1).at(2).n, int64_t{12});
}

QTEST_GUILESS_MAIN(TestStore)
#include "test_store.moc"
