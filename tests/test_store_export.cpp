// Export and import (byte-identical round trip in every format, all-or-nothing import), the compare
// scoreboard's arithmetic, and `tokamak runs` end to end when the CLI has been built.
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <sstream>
#include <nlohmann/json.hpp>

#include "engine/base/run/phases.h"
#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_support.h"
#include "tests/test_store_fakes.h"

using namespace tokamak;
using namespace tokamak::test;

class TestStoreExport : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void roundTrip_data();
  void roundTrip();
  void importIsAllOrNothing_data();
  void importIsAllOrNothing();
  void steadyValue_data();
  void steadyValue();
  void speedup_data();
  void speedup();
  void configDifferences();
  void compareFromStore();
  void phaseBreakdown();
  void phaseBreakdownInRunsCompare();
  void metricSummaries_data();
  void metricSummaries();
  void runsCompareStat();
  void groupsBySeedAndBand();
  void groupsByNameAndTag();
  void groupSpecErrors();
  void groupRowsInTheScoreboard();
  void runsCompareGroups();
  void groupsSayWhatTheirVerdictsStandOn();
  void speedOfLightKeptExportedCompared();
  void limitsKeptForEveryRun();
  void cliEndToEnd();
  void outputsNeverReplaceWhatTheyMustNot();
};

// What `bench --kernels` stores of a run: two counted kinds (one of each bound) and one it cannot count.
static SpeedOfLightRecord profiled(double matmul_ms = 12.5) {
  return {989e12,
          4.8e12,
          "datasheet (H200, bf16)",
          "measured: copies of 65.5 kB to 1.07 GB on the GPU",
          {{"matmul", matmul_ms, 84, 6.3e13, 0, 7.25, "compute"},
           {"norm", 3.25, 50, 0, 5.9e9, 1.2291666666666667, "memory"},
           {"other", 1.5, 200, 0, 0, -1, ""}}};
}

// Two runs with values that test number formatting, text escaping and absent metrics.
static void fill(RunStore& store) {
  store.transaction([&] {
    int64_t a = store.begin_run(fake_start("uid-a", "baseline, \"quoted\""), 1717000000.125, 11);
    int64_t b = store.begin_run(
        fake_start("uid-b", "tf32", R"({"train":{"steps":100},"speed":{"precision":"tf32","list":[1,2]}})"),
        1717000100.5, 12);
    std::vector<MetricRow> rows;
    for (int i = 1; i <= 30; ++i) {
      MetricRow r;
      r.step = i;
      r.set("tokens", 123456789012.0 + i);
      r.set("train_loss", 1.0 / 3.0 + i * 0.1);
      r.set("tok_s", 10000.0 + i);
      r.set("lr", i == 1 ? 1e-300 : 6e-4);
      if (i % 10 == 0) r.set("val_loss", 2.0 + 1.0 / i);
      if (i == 7) r.set("mem_peak", 1536.0 * 1024 * 1024);
      rows.push_back(r);
    }
    store.add_metrics(a, rows);
    for (auto& r : rows) r.set("tok_s", r["tok_s"] * 2.5);
    store.add_metrics(b, rows);
    store.add_sample(a, {10, "Hi", "Hi h\xc3\xa9llo \"you\"\n\ttab, comma", 1717000001.25});
    store.add_sample(b, {20, "", "broken \xff\xfe bytes", 1717000002.0});
    store.add_checkpoint(a, {30, "/tmp/ckpt 30.pt", 1717000003.0});
    store.add_play(a, {0, 30, "Hi", "Hi there", R"({"seed":7,"top_p":0.9})", 1717000004.5});
    store.end_run(a, "finished", "", 1717000010.0);
    store.end_run(b, "failed", "loss is NaN", 1717000011.0);
    store.set_tags(a, R"(["ladder","a100"])", "first try");
    store.set_speed_of_light(a, profiled());
  });
}

static std::string exported(RunStore& store, ExportFormat f, std::vector<int64_t> ids = {}) {
  std::ostringstream out;
  export_runs(store, ids, f, out);
  return out.str();
}

void TestStoreExport::roundTrip_data() {
  QTest::addColumn<int>("format");
  QTest::newRow("json") << int(ExportFormat::json);
  QTest::newRow("csv") << int(ExportFormat::csv);
  QTest::newRow("md") << int(ExportFormat::md);
}

void TestStoreExport::roundTrip() {
  QFETCH(int, format);
  QTemporaryDir dir;
  RunStore a(db_in(dir, "a.db"));
  fill(a);
  std::string json = exported(a, ExportFormat::json);
  write_file_atomically(db_in(dir, "export.json"), json);
  RunStore b(db_in(dir, "b.db"));
  ImportResult r = import_runs(b, db_in(dir, "export.json"));
  QCOMPARE(r.imported.size(), size_t{2});
  QCOMPARE(b.run(r.imported[0]).uid, std::string("uid-a"));
  auto f = static_cast<ExportFormat>(format);
  std::string first = f == ExportFormat::json ? json : exported(a, f);
  if (f == ExportFormat::json) {  // the first export replaced the invalid UTF-8; from then on it is stable
    QVERIFY(first.find("broken \xef\xbf\xbd\xef\xbf\xbd bytes") != std::string::npos);
    // The playground's tries travel with their run.
    QVERIFY2(first.find(R"("playground":[{"step":30,"prompt":"Hi","text":"Hi there","options":{"seed":7,"top_p":0.9},"created":1717000004.5}])") !=
                 std::string::npos,
             first.c_str());
    QCOMPARE(b.plays(r.imported[0]).size(), size_t{1});
  }
  QCOMPARE(exported(b, f), first);
  if (f == ExportFormat::csv) {
    QVERIFY(first.rfind("run,step,metric,value\n", 0) == 0);
    QVERIFY(first.find("\nuid-a,1,tokens,123456789013\n") != std::string::npos);
    QVERIFY(first.find("\nuid-a,1,lr,1e-300\n") != std::string::npos);
    QVERIFY(first.find("\nuid-b,30,tok_s,25075.0\n") != std::string::npos);
    // Full resolution: 2 runs x 30 steps x 4 metrics + 3 val_loss each + one mem_peak each.
    QCOMPARE(std::count(first.begin(), first.end(), '\n'), std::ptrdiff_t(1 + 2 * (30 * 4 + 3 + 1)));
  }
  if (f == ExportFormat::md) QVERIFY(first.find("| 2.50× |") != std::string::npos);
}

// A profiled run keeps its kinds and limits: read back as written, replaced by a second profile, carried by the
// JSON export into another store, gone with the run, and shown side by side in `runs compare`.
void TestStoreExport::speedOfLightKeptExportedCompared() {
  QTemporaryDir dir;
  RunStore a(db_in(dir, "a.db"));
  fill(a);
  const SpeedOfLightRecord kept = a.speed_of_light(1);
  QCOMPARE(kept.kinds.size(), size_t{3});
  QCOMPARE(kept.matmul_flops, 989e12);
  QCOMPARE(QString::fromStdString(kept.memory_source), QString("measured: copies of 65.5 kB to 1.07 GB on the GPU"));
  QCOMPARE(QString::fromStdString(kept.kinds[1].kind), QString("norm"));
  QCOMPARE(kept.kinds[1].floor_ms, 1.2291666666666667);
  QCOMPARE(kept.kinds[2].floor_ms, -1.0);
  QVERIFY(a.speed_of_light(2).kinds.empty());  // not profiled
  const std::string json = exported(a, ExportFormat::json);
  QVERIFY(json.find("\"speed_of_light\":{\"matmul_flops\":989000000000000.0") != std::string::npos);
  write_file_atomically(db_in(dir, "export.json"), json);
  RunStore b(db_in(dir, "b.db"));
  const ImportResult r = import_runs(b, db_in(dir, "export.json"));
  const SpeedOfLightRecord imported = b.speed_of_light(r.imported[0]);
  QCOMPARE(imported.kinds.size(), size_t{3});
  QCOMPARE(imported.kinds[0].flops, 6.3e13);
  QCOMPARE(QString::fromStdString(imported.kinds[1].bound), QString("memory"));
  QVERIFY(b.speed_of_light(r.imported[1]).kinds.empty());
  a.set_speed_of_light(2, profiled(9.75));  // a second rung, profiled
  a.set_speed_of_light(2, profiled(8.5));   // profiled again: replaces, never adds
  QCOMPARE(a.speed_of_light(2).kinds.size(), size_t{3});
  QCOMPARE(a.speed_of_light(2).kinds[0].ms, 8.5);
  QVERIFY2(path_exists(test::tokamak_bin().toStdString()),
           "TOKAMAK_TOKAMAK_BIN does not name the built CLI (run the suite through ctest)");
  std::string out;
  QCOMPARE(tokamak_line("runs compare 1 2 --db " + db_in(dir, "a.db"), &out), 0);
  QVERIFY2(out.find("speed of light (--kernels):") != std::string::npos, out.c_str());
  QVERIFY2(out.find(QString("matmul                 12.50 (7.25)").toStdString()) != std::string::npos, out.c_str());
  QVERIFY2(out.find("8.50 (7.25)") != std::string::npos, out.c_str());
  QVERIFY2(out.find("other                  1.50") != std::string::npos, out.c_str());
  QVERIFY2(out.find("step                   17.25 (8.48)") != std::string::npos, out.c_str());
  a.delete_run(1);
  QVERIFY(a.speed_of_light(1).kinds.empty());
  QCOMPARE(a.db().query_int("SELECT count(*) FROM kind_floors WHERE run_id = 1"), int64_t{0});
}

// Every run keeps the two limits its start stated, profiled or not: its start writes them, a resumed start
// replaces them unless a profile's floors were computed under them, and the JSON export carries them.
void TestStoreExport::limitsKeptForEveryRun() {
  QTemporaryDir dir;
  RunStore a(db_in(dir, "a.db"));
  RunStart start = fake_start("uid-limits");
  start.peak_flops = 181e9, start.peak_source = "measured: 2048³ fp32 GEMM, 2 threads";
  start.memory_bytes_per_s = 11.2e9, start.memory_source = "measured now: copies of 65.5 kB and 268 MB, 2 threads";
  int64_t id = 0;
  a.transaction([&] { id = a.begin_run(start, 1717000000.0, 11); });
  const SpeedOfLightRecord kept = a.speed_of_light(id);
  QCOMPARE(kept.matmul_flops, 181e9);
  QCOMPARE(kept.memory_bytes_per_s, 11.2e9);
  QCOMPARE(QString::fromStdString(kept.memory_source), QString::fromStdString(start.memory_source));
  QVERIFY(kept.kinds.empty());  // limits alone: not profiled
  // Resumed where the copies ran faster: the row says what the run is held against now.
  start.start_step = 10, start.memory_bytes_per_s = 12e9;
  a.transaction([&] { QCOMPARE(a.begin_run(start, 1717000100.0, 12), id); });
  QCOMPARE(a.speed_of_light(id).memory_bytes_per_s, 12e9);
  // A start that knew neither limit (an older engine's journal): no row, no export entry.
  int64_t unknown = 0;
  a.transaction([&] {
    unknown = a.begin_run(fake_start("uid-unknown"), 1717000200.0, 13);
    a.end_run(id, "finished", "", 1717000250.0);
    a.end_run(unknown, "finished", "", 1717000250.0);
  });
  QVERIFY(!a.speed_of_light(unknown).has_limits());
  const std::string json = exported(a, ExportFormat::json);
  QCOMPARE(json.find("\"speed_of_light\""), json.rfind("\"speed_of_light\""));  // the first run's alone
  write_file_atomically(db_in(dir, "export.json"), json);
  RunStore b(db_in(dir, "b.db"));
  const ImportResult r = import_runs(b, db_in(dir, "export.json"));
  QCOMPARE(r.imported.size(), size_t{2});
  QCOMPARE(b.speed_of_light(r.imported[0]).memory_bytes_per_s, 12e9);
  QCOMPARE(b.speed_of_light(r.imported[0]).matmul_flops, 181e9);
  QVERIFY(b.speed_of_light(r.imported[0]).kinds.empty());
  QVERIFY(!b.speed_of_light(r.imported[1]).has_limits());
  QCOMPARE(exported(b, ExportFormat::json), json);
  // Profiled, the run keeps the limits its floors were computed under, whatever a later segment's start says.
  a.set_speed_of_light(id, profiled());
  start.start_step = 20, start.memory_bytes_per_s = 13e9;
  a.transaction([&] { a.begin_run(start, 1717000300.0, 14); });
  QCOMPARE(a.speed_of_light(id).memory_bytes_per_s, 4.8e12);
  QCOMPARE(a.speed_of_light(id).kinds.size(), size_t{3});
}

void TestStoreExport::importIsAllOrNothing_data() {
  QTest::addColumn<QString>("content");
  QTest::addColumn<QString>("message");
  QTest::newRow("not JSON") << "hello"
                            << "is not JSON";
  QTest::newRow("other JSON") << R"({"runs":[]})"
                              << "is not a Tokamak export";
  QTest::newRow("newer format") << R"({"tokamak_export":2,"runs":[]})"
                                << "newer Tokamak (export format 2";
  QTest::newRow("bad row") << R"({"tokamak_export":1,"runs":[{"uid":"x","metrics":[]},
      {"uid":"y","metrics":[{"step":"one"}]}]})"
                           << "is not a valid Tokamak export";
  // fuzz_import found these: a float where an integer belongs was cast with undefined behaviour.
  QTest::newRow("step out of range") << R"({"tokamak_export":1,"runs":[{"uid":"x","samples":[{"step":4.8e80}]}]})"
                                     << "\"step\": 4.8e+80 is not a 64-bit integer; nothing was imported";
  QTest::newRow("fractional step") << R"({"tokamak_export":1,"runs":[{"uid":"x","checkpoints":[{"step":1.5}]}]})"
                                   << "\"step\": 1.5 is not a 64-bit integer";
  QTest::newRow("huge n_params") << R"({"tokamak_export":1,"runs":[{"uid":"x","n_params":1e300}]})"
                                 << "\"n_params\": 1e+300 is not a 64-bit integer";
  QTest::newRow("uid already there") << ""
                                     << "is already in";
}

void TestStoreExport::importIsAllOrNothing() {
  QFETCH(QString, content);
  QFETCH(QString, message);
  QTemporaryDir dir;
  RunStore store(db_in(dir));
  std::string file = db_in(dir, "in.json");
  if (content.isEmpty()) {  // a fresh run plus one that exists: neither may land
    fill(store);
    RunStore other(db_in(dir, "other.db"));
    fill(other);
    other.transaction([&] { other.begin_run(fake_start("uid-new"), 1, 1); });
    write_file_atomically(file, exported(other, ExportFormat::json, {3, 1}));
  } else {
    write_file_atomically(file, content.toStdString());
  }
  size_t before = store.list_runs().size();
  std::string err = error_of([&] { import_runs(store, file); }).toStdString();
  QVERIFY2(err.find(message.toStdString()) != std::string::npos, err.c_str());
  QCOMPARE(store.list_runs().size(), before);
  if (content.isEmpty()) {
    ImportResult r = import_runs(store, file, true);
    QCOMPARE(r.imported.size(), size_t{1});
    QCOMPARE(r.skipped, std::vector<std::string>{"uid-a"});
  }
}

void TestStoreExport::steadyValue_data() {
  QTest::addColumn<std::vector<double>>("values");
  QTest::addColumn<double>("expected");
  QTest::newRow("none") << std::vector<double>{} << std::nan("");
  QTest::newRow("one value is kept") << std::vector<double>{5} << 5.0;
  QTest::newRow("first of two dropped") << std::vector<double>{1, 10} << 10.0;
  QTest::newRow("warm-up dropped, median") << std::vector<double>{100, 1, 3, 2} << 2.0;
  QTest::newRow("even count: mean of middle two") << std::vector<double>{0, 4, 1, 2, 3} << 2.5;
  std::vector<double> twenty(20, 50.0);
  twenty[0] = twenty[1] = 1e9;  // 10% of 20 = 2 warm-up reports
  QTest::newRow("10% of twenty") << twenty << 50.0;
}

void TestStoreExport::steadyValue() {
  QFETCH(std::vector<double>, values);
  QFETCH(double, expected);
  double got = steady_value(values);
  if (std::isnan(expected)) QVERIFY(std::isnan(got));
  else QCOMPARE(got, expected);
}

void TestStoreExport::speedup_data() {
  QTest::addColumn<double>("base");
  QTest::addColumn<double>("other");
  QTest::addColumn<int>("baseline");
  QTest::addColumn<double>("expected");
  QTest::newRow("2.5x") << 10000.0 << 25000.0 << 0 << 2.5;
  QTest::newRow("write-up: 12.5K -> 142K") << 12500.0 << 142000.0 << 0 << 11.36;
  QTest::newRow("--baseline the second") << 10000.0 << 25000.0 << 1 << 0.4;
}

void TestStoreExport::speedup() {
  QFETCH(double, base);
  QFETCH(double, other);
  QFETCH(int, baseline);
  QFETCH(double, expected);
  ScoreInput a, b;
  // A slow first report (warm-up) that must not count.
  a.tok_s = {base / 10, base, base, base};
  b.tok_s = {other / 10, other, other, other};
  Scoreboard s = build_scoreboard({a, b}, baseline);
  QCOMPARE(s.rows[0].tok_s, base);
  QCOMPARE(s.rows[1].tok_s, other);
  QCOMPARE(std::round(s.rows[1 - baseline].speedup * 100) / 100, expected);
  QCOMPARE(s.rows[baseline].speedup, 1.0);
}

void TestStoreExport::configDifferences() {
  ScoreInput a, b;
  a.config_json = R"({"speed":{"precision":"fp32","fused_adamw":false},"train":{"steps":100}})";
  b.config_json = R"({"speed":{"precision":"bf16","fused_adamw":false},"train":{"steps":100},"device":"cuda"})";
  Scoreboard s = build_scoreboard({a, b}, 0);
  QCOMPARE(s.diff_keys, (std::vector<std::string>{"device", "speed.precision"}));
  QCOMPARE(s.diff_values[0], (std::vector<std::string>{"-", "cuda"}));
  QCOMPARE(s.diff_values[1], (std::vector<std::string>{"fp32", "bf16"}));
}

void TestStoreExport::compareFromStore() {
  QTemporaryDir dir;
  RunStore store(db_in(dir));
  fill(store);
  Scoreboard s = build_scoreboard({score_input(store, 1), score_input(store, 2)}, 0);
  // Median of reports 4..30 (the first 10% = 3 reports dropped): 10000 + 17 and 2.5 times that.
  QCOMPARE(s.rows[0].tok_s, 10017.0);
  QCOMPARE(s.rows[1].speedup, 2.5);
  QCOMPARE(s.rows[0].peak_mem, 1536.0 * 1024 * 1024);
  QCOMPARE(s.rows[0].best_val_loss, 2.0 + 1.0 / 30);
  QCOMPARE(s.rows[0].final_val_loss, 2.0 + 1.0 / 30);
  std::string text = format_scoreboard_text(s);
  QVERIFY2(text.find("2.50×") != std::string::npos, text.c_str());
  QVERIFY2(text.find("speed.precision") != std::string::npos, text.c_str());
  QVERIFY2(text.find("1.61 GB") != std::string::npos, text.c_str());
}

static constexpr int kForward = static_cast<int>(Phase::kForward), kBackward = static_cast<int>(Phase::kBackward),
                     kOther = static_cast<int>(Phase::kOther), kData = static_cast<int>(Phase::kData);

// The step profile's table: each phase's mean over the reports after the first (the first is the warm-up), a
// column only for the phases some run reported, their sum beside step_ms; a run without a profile has
// dashes, and a board where no run has one prints no table.
void TestStoreExport::phaseBreakdown() {
  ScoreInput a, b;
  a.label = "#1 a", b.label = "#2 old";
  a.step_ms = {100, 10, 12};
  a.phase_ms[kForward] = {60, 4, 6};
  a.phase_ms[kBackward] = {30, 5, 5};
  a.phase_ms[kOther] = {10, 1, 1};
  b.step_ms = {50, 20, 20};
  Scoreboard s = build_scoreboard({a, b}, 0);
  QCOMPARE(s.rows[0].phase_ms[kForward], 5.0);
  QCOMPARE(s.rows[0].phase_ms[kBackward], 5.0);
  QCOMPARE(s.rows[0].step_ms, 11.0);
  QVERIFY(std::isnan(s.rows[0].phase_ms[kData]));
  QVERIFY(std::isnan(s.rows[1].phase_ms[kForward]));
  QCOMPARE(s.rows[1].step_ms, 20.0);
  const std::string text = format_scoreboard_text(s);
  const size_t table = text.find("ms per step by phase");
  QVERIFY2(table != std::string::npos, text.c_str());
  const std::string phases = text.substr(table);
  auto line_of = [&](const std::string& start) {
    const size_t at = phases.find("\n" + start);
    return at == std::string::npos ? std::string() : phases.substr(at + 1, phases.find('\n', at + 1) - at - 1);
  };
  QCOMPARE(line_of("run"), std::string("run     forward  backward  other  sum    step"));
  QCOMPARE(line_of("#1 a"), std::string("#1 a    5.00     5.00      1.00   11.00  11.00"));
  QCOMPARE(line_of("#2 old"), std::string("#2 old  -        -         -      -      20.00"));
  const std::string md = format_scoreboard_markdown(s);
  QVERIFY2(md.find("| #1 a | 5.00 | 5.00 | 1.00 | 11.00 | 11.00 |") != std::string::npos, md.c_str());
  const std::string without = format_scoreboard_text(build_scoreboard({b}, 0));
  QVERIFY2(without.find("by phase") == std::string::npos, without.c_str());
}

// End to end through the store and the CLI: phases recorded as a run's metrics come out of `runs compare`.
void TestStoreExport::phaseBreakdownInRunsCompare() {
  QVERIFY2(path_exists(test::tokamak_bin().toStdString()),
           "TOKAMAK_TOKAMAK_BIN does not name the built CLI (run the suite through ctest)");
  QTemporaryDir dir;
  std::string db = db_in(dir);
  {
    RunStore store(db);
    store.transaction([&] {
      int64_t id = store.begin_run(fake_start("uid-p", "profiled"), 1717000000.0, 11);
      std::vector<MetricRow> rows;
      for (int i = 1; i <= 4; ++i) {
        MetricRow r;
        r.step = i;
        r.set("step_ms", i == 1 ? 900 : 30);
        r.set("phase_data_ms", i == 1 ? 300 : 0.5);
        r.set("phase_forward_ms", i == 1 ? 300 : 10 + i);  // 12, 13, 14: mean 13
        r.set("phase_backward_ms", i == 1 ? 200 : 15);
        r.set("phase_optimizer_ms", i == 1 ? 90 : 1.25);
        r.set("phase_other_ms", i == 1 ? 10 : 0.25);
        rows.push_back(r);
      }
      store.add_metrics(id, rows);
      store.end_run(id, "finished", "", 1717000010.0);
    });
  }
  std::string out;
  QCOMPARE(tokamak_line("runs compare 1 --db " + db, &out), 0);
  QVERIFY2(out.find("run          data  forward  backward  optimizer  other  sum    step") != std::string::npos,
           out.c_str());
  QVERIFY2(out.find("#1 profiled  0.50  13.00    15.00     1.25       0.25   30.00  30.00") != std::string::npos,
           out.c_str());
}

void TestStoreExport::metricSummaries_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("stat");
  QTest::addColumn<double>("expected");
  // Values in step order: 5, 3, NaN (not recorded), 4, 9, 1.
  QTest::newRow("last") << "train_loss"
                        << "last" << 1.0;
  QTest::newRow("min") << "tok_s"
                       << "min" << 1.0;
  QTest::newRow("max") << "train_loss"
                       << "max" << 9.0;
  QTest::newRow("best loss is the lowest") << "val_loss"
                                           << "best" << 1.0;
  QTest::newRow("best tok/s is the highest") << "tok_s"
                                             << "best" << 9.0;
  QTest::newRow("best step time is the lowest") << "phase_forward_ms"
                                                << "best" << 1.0;
  QTest::newRow("mean of the last 3 recorded") << "tok_s"
                                               << "mean:3" << (4.0 + 9 + 1) / 3;
  QTest::newRow("mean:K longer than the run: all") << "tok_s"
                                                   << "mean:100" << (5.0 + 3 + 4 + 9 + 1) / 5;
}

void TestStoreExport::metricSummaries() {
  QFETCH(QString, key);
  QFETCH(QString, stat);
  QFETCH(double, expected);
  const std::vector<double> values = {5, 3, kNaN, 4, 9, 1};
  QCOMPARE(summarize_metric(key.toStdString(), values, stat.toStdString()), expected);
}

// --stat picks what the metric table shows; a stat that is none of them is refused in one line, naming it.
void TestStoreExport::runsCompareStat() {
  QVERIFY(std::isnan(summarize_metric("lr", {1, 2}, "best")));  // no better way for a learning rate
  for (const char* bad : {"mean", "mean:0", "mean:x", "median", ""})
    QVERIFY2(!error_of([&] { check_metric_stat(bad); }).isEmpty(), bad);
  QVERIFY2(path_exists(test::tokamak_bin().toStdString()),
           "TOKAMAK_TOKAMAK_BIN does not name the built CLI (run the suite through ctest)");
  QTemporaryDir dir;
  std::string db = db_in(dir);
  {
    RunStore store(db);
    fill(store);  // tok_s of run 1: 10000 + step, steps 1..30
  }
  std::string out;
  QCOMPARE(tokamak_line("runs compare 1 2 --stat mean:10 --db " + db, &out), 0);
  QVERIFY2(out.find("metric (mean of last 10)") != std::string::npos, out.c_str());
  const size_t tok = out.find("\ntok_s ", out.find("metric (mean"));
  QVERIFY2(tok != std::string::npos, out.c_str());
  const std::string line = out.substr(tok + 1, out.find('\n', tok + 1) - tok - 1);
  QVERIFY2(line.find(" 10025.5 ") != std::string::npos, line.c_str());  // mean of 10021..10030
  QVERIFY2(line.find(" 25063.8") != std::string::npos, line.c_str());   // 2.5 times that
  QCOMPARE(tokamak_line("runs compare 1 --stat best --db " + db, &out), 0);
  QVERIFY2(out.find("metric (best)") != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs compare 1 --stat median --db " + db, &out, true), 1);
  QVERIFY2(out.find("'median' is not a metric summary") != std::string::npos, out.c_str());
}

// Configs that differ only in train.seed (or the name) are one group; any other key splits them. A band is
// taken where every run of the group reported: mean, min and max of their values there.
void TestStoreExport::groupsBySeedAndBand() {
  const std::vector<int> groups = group_by_config({R"({"train":{"seed":1},"optimizer":{"lr":0.002},"name":"a"})",
                                                   R"({"train":{"seed":2},"optimizer":{"lr":0.002},"name":"b"})",
                                                   R"({"train":{"seed":1},"optimizer":{"lr":0.001},"name":"a"})",
                                                   R"({"train":{"seed":3},"optimizer":{"lr":0.002},"name":"c"})"});
  QCOMPARE(groups, (std::vector<int>{0, 0, 1, 0}));
  const Band b = band_over_runs({{{1, 4.0}, {2, 3.0}, {3, 2.0}}, {{1, 6.0}, {3, 1.0}}, {{1, 5.0}, {2, 9.0}, {3, 3.0}}});
  QCOMPARE(b.x, (std::vector<double>{1, 3}));  // step 2 is missing from the second run
  QCOMPARE(b.mean, (std::vector<double>{5.0, 2.0}));
  QCOMPARE(b.min, (std::vector<double>{4.0, 1.0}));
  QCOMPARE(b.max, (std::vector<double>{6.0, 3.0}));
  QCOMPARE(b.std, (std::vector<double>{1.0, 1.0}));  // sample std of {4,6,5} and of {2,1,3}
  const Band one = band_over_runs({{{1, 4.0}, {2, 3.0}}});
  QCOMPARE(one.std, (std::vector<double>{0.0, 0.0}));
  QVERIFY(std::isnan(sample_std({kNaN})));
  QCOMPARE(sample_std({2, kNaN, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7));
}

// A name pattern groups by its first capture group (or the whole match); the first tag groups; a run that
// fits no group stands alone, and groups are numbered in the order they first appear.
void TestStoreExport::groupsByNameAndTag() {
  const std::vector<GroupInput> runs = {{"flash-s1", {"ladder"}, "{}"},
                                        {"base-s1", {}, "{}"},
                                        {"flash-s2", {"ladder", "x"}, "{}"},
                                        {"odd", {"x"}, "{}"},
                                        {"base-s2", {"ladder"}, "{}"}};
  Grouping g = group_runs(runs, parse_group_spec("name:(.*)-s[0-9]+"));
  QCOMPARE(g.group, (std::vector<int>{0, 1, 0, 2, 1}));
  QCOMPARE(g.names, (std::vector<std::string>{"flash", "base", "odd"}));
  QCOMPARE(g.size, (std::vector<int>{2, 2, 1}));
  g = group_runs(runs, parse_group_spec("name:s1"));  // no capture group: the match itself
  QCOMPARE(g.group, (std::vector<int>{0, 0, 1, 2, 3}));
  g = group_runs(runs, parse_group_spec("tag"));
  QCOMPARE(g.group, (std::vector<int>{0, 1, 0, 2, 0}));
  QCOMPARE(g.names, (std::vector<std::string>{"ladder", "base-s1", "x"}));
  // By seed, a group is called what its runs' names share, cut back to a separator.
  const std::string lr1 = R"({"optimizer":{"lr":0.001},"train":{"seed":1}})",
                    lr3 = R"({"optimizer":{"lr":0.003},"train":{"seed":2}})";
  g = group_runs({{"lr0.001-s1", {}, lr1},
                  {"lr0.003-s2", {}, lr3},
                  {"lr0.001-s12", {}, lr1},
                  {"x", {}, lr3},
                  {"lr0.001-s3", {}, lr1}},
                 parse_group_spec("seed"));
  QCOMPARE(g.group, (std::vector<int>{0, 1, 0, 1, 0}));
  QCOMPARE(g.names, (std::vector<std::string>{"lr0.001", "lr0.003-s2"}));  // nothing shared: the first name
  g = group_runs(runs, parse_group_spec("none"));
  QCOMPARE(g.group, (std::vector<int>{0, 1, 2, 3, 4}));
  RunInfo info;
  info.name = "n", info.tags_json = R"(["b","a"])", info.config_json = "{}";
  QCOMPARE(group_input(info).tags, (std::vector<std::string>{"b", "a"}));
}

void TestStoreExport::groupSpecErrors() {
  QCOMPARE(parse_group_spec("seed").by, GroupSpec::By::kSeed);
  QVERIFY2(error_of([] { parse_group_spec("name:(unclosed"); }).contains("group pattern '(unclosed'"),
           qPrintable(error_of([] { parse_group_spec("name:(unclosed"); })));
  for (const char* bad : {"seeds", "name:", "tags", "config"})
    QVERIFY2(error_of([&] { parse_group_spec(bad); }).contains("is not a way to group runs"), bad);
}

// A group's row holds its runs' means, the largest peak memory and the spread of tok/s; a group of one is
// no group.
void TestStoreExport::groupRowsInTheScoreboard() {
  std::vector<ScoreInput> in(4);
  const double rates[] = {100, 200, 300, 1000};
  for (size_t i = 0; i < in.size(); ++i) {
    in[i].label = "#" + std::to_string(i + 1) + " run";
    in[i].tok_s = {1, rates[i], rates[i]};  // steady value: the median after the first
    in[i].peak_mem = 1000.0 * double(i + 1);
    in[i].best_val_loss = double(i);
  }
  Scoreboard b = build_scoreboard(in, 0);
  Grouping g;
  g.group = {0, 0, 0, 1}, g.names = {"three", "one"}, g.size = {3, 1};
  add_group_rows(b, g);
  QCOMPARE(b.groups.size(), size_t(1));
  const ScoreGroup& three = b.groups.front();
  QCOMPARE(three.label, std::string("three ×3"));
  QCOMPARE(three.members, (std::vector<size_t>{0, 1, 2}));
  QCOMPARE(three.mean.tok_s, 200.0);
  QCOMPARE(three.mean.speedup, 2.0);  // (1 + 2 + 3) / 3 over run 1
  QCOMPARE(three.tok_s_std, 100.0);
  QCOMPARE(three.tok_s_min, 100.0);
  QCOMPARE(three.tok_s_max, 300.0);
  QCOMPARE(three.mean.peak_mem, 3000.0);
  QCOMPARE(three.mean.best_val_loss, 1.0);
  const std::string text = format_scoreboard_text(b);
  QVERIFY2(text.find("three ×3  #1 #2 #3") != std::string::npos, text.c_str());
  QVERIFY2(format_scoreboard_markdown(b).find("| three ×3 |") != std::string::npos, text.c_str());
}

// `runs compare --group seed` adds the group row; a bad --group is refused before any output.
void TestStoreExport::runsCompareGroups() {
  QVERIFY2(path_exists(test::tokamak_bin().toStdString()),
           "TOKAMAK_TOKAMAK_BIN does not name the built CLI (run the suite through ctest)");
  QTemporaryDir dir;
  std::string db = db_in(dir);
  {
    RunStore store(db);
    for (int seed = 1; seed <= 3; ++seed) {
      const std::string config = R"({"optimizer":{"lr":0.001},"train":{"seed":)" + std::to_string(seed) + R"(}})";
      int64_t id = store.begin_run(fake_start("uid-" + std::to_string(seed), "s" + std::to_string(seed), config),
                                   1717000000.0 + seed, 11);
      std::vector<MetricRow> rows;
      for (int i = 1; i <= 5; ++i) {
        MetricRow r;
        r.step = i;
        r.set("tok_s", 1000.0 * seed);
        rows.push_back(r);
      }
      store.add_metrics(id, rows);
      store.end_run(id, "finished", "", 1717000010.0);
    }
  }
  std::string out;
  QCOMPARE(tokamak_line("runs compare 1 2 3 --group seed --db " + db, &out), 0);
  QVERIFY2(out.find("groups (means of their runs)") != std::string::npos, out.c_str());
  const size_t at = out.find("\ns1 ×3  ");
  QVERIFY2(at != std::string::npos, out.c_str());
  const std::string row = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
  // The group's tok/s is the mean 2K, its std 1K, its range 1K–3K; speedup the mean of 1×, 2×, 3×.
  for (const char* cell : {"  #1 #2 #3  ", "  2K ", "  1K ", "  1K–3K ", "  2.00×"})
    QVERIFY2(row.find(cell) != std::string::npos, (row + " lacks '" + cell + "'").c_str());
  QCOMPARE(tokamak_line("runs compare 1 2 3 --db " + db, &out), 0);
  QVERIFY2(out.find("groups") == std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs compare 1 2 --group \"name:(\" --db " + db, &out, true), 1);
  QVERIFY2(out.find("group pattern '('") != std::string::npos, out.c_str());
  QVERIFY2(out.find("#1") == std::string::npos, out.c_str());  // refused before the scoreboard

  // A second setup's three seeds at 4K, 5K and 6K tok/s: the JSON export's groups carry the verdict as numbers.
  // Welch by hand: means 2K and 5K, both std 1K, n 3: se = sqrt(2/3)·1K = 816.5, t = 3.674, df = 4, t(0.975, 4) =
  // 2.7764: 3000 ± 2267; p = 0.0213.
  {
    RunStore store(db);
    for (int seed = 1; seed <= 3; ++seed) {
      const std::string config = R"({"optimizer":{"lr":0.002},"train":{"seed":)" + std::to_string(seed) + R"(}})";
      int64_t id = store.begin_run(fake_start("uid-b" + std::to_string(seed), "b" + std::to_string(seed), config),
                                   1717000100.0 + seed, 11);
      MetricRow r;
      r.step = 1, r.set("tok_s", 3000.0 + 1000.0 * seed);
      store.add_metrics(id, {r});
      store.end_run(id, "finished", "", 1717000110.0);
    }
  }
  QCOMPARE(tokamak_line("runs export 1 2 3 4 5 6 --format json --group seed --db " + db, &out), 0);
  const nlohmann::json doc = nlohmann::json::parse(out);
  QCOMPARE(doc["groups"].size(), size_t{2});
  QCOMPARE(doc["groups"][0]["runs"], nlohmann::json({"uid-1", "uid-2", "uid-3"}));
  QVERIFY(doc["groups"][0]["holds_baseline"].get<bool>());
  QVERIFY(doc["groups"][0]["verdicts"]["tok_s"].is_null());
  const nlohmann::json& v = doc["groups"][1]["verdicts"]["tok_s"];
  QCOMPARE(v["test"].get<std::string>(), std::string("welch"));
  QCOMPARE(v["diff"].get<double>(), 3000.0);
  QVERIFY(std::abs(v["ci95_low"].get<double>() - (3000 - 2.7764451 * 816.4966)) < 0.5);
  QVERIFY(std::abs(v["p"].get<double>() - 0.02131) < 1e-4);
  QCOMPARE(v["df"].get<double>(), 4.0);
  QVERIFY(v["resolved"].get<bool>());
  QCOMPARE(tokamak_line("runs export 1 2 --format csv --group seed --db " + db, &out, true), 1);
  QVERIFY2(out.find("--group applies to --format md and json") != std::string::npos, out.c_str());
}

// Three seeds of a baseline setup, three of another (one never reached the target, one failed and logged nothing) and
// a run alone. The JSON export counts the censored and missing runs in each verdict and says why the run alone has
// none; with the run alone as the baseline, every group says why it has no verdict: in the JSON, the Markdown and
// `runs compare --group`.
void TestStoreExport::groupsSayWhatTheirVerdictsStandOn() {
  QTemporaryDir dir;
  const std::string db = db_in(dir);
  std::vector<int64_t> ids;
  {
    RunStore store(db);
    const auto add = [&](const std::string& name, const std::string& lr, int seed, double tok_s, double ttt) {
      const std::string config = R"({"eval":{"target_val_loss":3.0},"optimizer":{"lr":)" + lr +
                                 R"(},"train":{"seed":)" + std::to_string(seed) + "}}";
      const int64_t id = store.begin_run(fake_start("uid-" + name, name, config), 1717000000.0 + double(ids.size()), 11);
      std::vector<MetricRow> rows;
      for (int i = 1; std::isfinite(tok_s) && i <= 5; ++i) {  // a failed run logged nothing
        MetricRow r;
        r.step = i;
        r.set("tok_s", tok_s);
        if (i == 5) r.set("val_loss", 3.5);
        if (i == 5 && std::isfinite(ttt)) r.set("time_to_target_s", ttt);
        rows.push_back(r);
      }
      store.add_metrics(id, rows);
      store.end_run(id, std::isfinite(tok_s) ? "finished" : "failed", "", 1717000100.0);
      ids.push_back(id);
    };
    for (int seed = 1; seed <= 3; ++seed) add("a-s" + std::to_string(seed), "0.001", seed, 1000.0 * seed, 10.0 * seed);
    add("b-s1", "0.002", 1, 4000, 5);
    add("b-s2", "0.002", 2, 5000, kNaN);  // never reached the target: censored
    add("b-s3", "0.002", 3, kNaN, kNaN);  // failed: no tok/s, no val loss (and, with a target, censored too)
    add("c", "0.003", 1, 7000, 4);
  }
  RunStore store(db);
  const auto groups = [&](std::vector<int64_t> order) {
    std::ostringstream out;
    export_runs(store, order, ExportFormat::json, out, parse_group_spec("seed"));
    return nlohmann::json::parse(out.str())["groups"];
  };
  nlohmann::json g = groups(ids);
  QCOMPARE(g.size(), size_t{3});
  QVERIFY(!g[0].contains("no_verdict") && !g[1].contains("no_verdict"));
  const nlohmann::json& v = g[1]["verdicts"];
  QCOMPARE(v["tok_s"]["missing"].get<int>(), 1);
  QCOMPARE(v["tok_s"]["censored"].get<int>(), 0);
  QCOMPARE(v["tok_s"]["n"].get<int>(), 2);
  QCOMPARE(v["final_val_loss"]["missing"].get<int>(), 1);
  QCOMPARE(v["time_to_target_s"]["censored"].get<int>(), 2);
  QCOMPARE(v["time_to_target_s"]["missing"].get<int>(), 0);
  QCOMPARE(v["time_to_target_s"]["n"].get<int>(), 1);
  QCOMPARE(v["time_to_target_s"]["runs"].get<int>(), 3);
  QCOMPARE(v["time_to_target_s"]["censored_baseline"].get<int>(), 0);
  QCOMPARE(v["time_to_target_s"]["missing_baseline"].get<int>(), 0);
  QVERIFY(!v["time_to_target_s"]["resolved"].get<bool>());
  QCOMPARE(g[2]["runs"], nlohmann::json({"uid-c"}));
  QCOMPARE(g[2]["no_verdict"].get<std::string>(), std::string("a group needs 2 runs or more"));

  // The run alone first, so the baseline: no group has a verdict, and each says why.
  g = groups({ids[6], ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]});
  QCOMPARE(g.size(), size_t{3});
  const std::string why = "the baseline's group (c ×1) has one run: a verdict needs 2 runs a side";
  for (int k : {0, 1}) {
    QVERIFY2(g[k].contains("no_verdict"), g[k].dump().c_str());
    QCOMPARE(g[k]["no_verdict"].get<std::string>(), why);
    QVERIFY(g[k]["verdicts"]["tok_s"].is_null());
  }
  std::ostringstream md;
  export_runs(store, {ids[6], ids[0], ids[1], ids[2], ids[3], ids[4], ids[5]}, ExportFormat::md, md,
              parse_group_spec("seed"));
  QVERIFY2(md.str().find("No verdicts: the baseline's group (c ×1) has one run") != std::string::npos, md.str().c_str());
  std::string out;
  std::string order;
  for (size_t i : {6, 0, 1, 2, 3, 4, 5}) order += std::to_string(ids[i]) + " ";
  QCOMPARE(tokamak_line("runs compare " + order + "--group seed --db " + db, &out), 0);
  QVERIFY2(out.find("no verdicts: " + why + " (hint: make the baseline a run of a group with 2 runs or more)") !=
               std::string::npos,
           out.c_str());
}

// The rule for every output (engine/base/util/output_path.h) as a user meets it: an export pointed at the store,
// the checkpoint it reads, a link or a FIFO is refused before any work, and the store still opens; an earlier export
// is replaced only with --force, a file of another kind never; a folder export never writes among other files.
void TestStoreExport::outputsNeverReplaceWhatTheyMustNot() {
  QTemporaryDir dir;
  const std::string db = db_in(dir, "runs.db");
  {
    RunStore store(db);
    fill(store);
  }
  const auto refused = [&](const std::string& args, const char* why) {
    std::string out;
    const int code = tokamak_line(args, &out, true);
    QVERIFY2(code != 0 && out.find(why) != std::string::npos, (args + " → " + out).c_str());
  };
  refused("runs export 1 --format json --db " + db + " --force --out " + db, "is what this command reads");
  const std::string copy = db_in(dir, "store_copy.json");  // a store by any name
  QCOMPARE(::link(db.c_str(), db_in(dir, "copy.db").c_str()), 0);
  QVERIFY(::rename(db_in(dir, "copy.db").c_str(), copy.c_str()) == 0);
  refused("runs export 1 --format json --db " + db + " --force --out " + copy, "is what this command reads");
  QCOMPARE(::unlink(copy.c_str()), 0);
  const std::string csv = db_in(dir, "runs.csv"), notes = db_in(dir, "notes.txt");
  std::string out;
  QCOMPARE(tokamak_line("runs export 1 --format csv --db " + db + " --out " + csv, &out, true), 0);
  refused("runs export 1 --format csv --db " + db + " --out " + csv, "exists (hint: pass --force");
  QCOMPARE(tokamak_line("runs export 1 --format csv --db " + db + " --out " + csv + " --force", &out, true), 0);
  write_file_atomically(notes, "mine");
  refused("runs export 1 --format csv --db " + db + " --force --out " + notes, "is not a .csv file");
  QCOMPARE(read_file(notes), std::string("mine"));
  // `tokamak export` refuses before it loads anything: a checkpoint that is no model shows it.
  const std::string ck = db_in(dir, "step_30.safetensors"), fifo = db_in(dir, "fifo.gguf"),
                    link = db_in(dir, "link.gguf"), old = db_in(dir, "old.gguf");
  write_file_atomically(ck, "not a model");
  write_file_atomically(old, "an earlier export");
  QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
  QCOMPARE(::symlink(notes.c_str(), link.c_str()), 0);
  const std::string gguf = "export --format gguf --checkpoint " + ck + " --out ";
  refused(gguf + ck + " --force", "is what this command reads");
  refused(gguf + db + " --force", "is a run store");
  refused(gguf + fifo + " --force", "is a FIFO");
  refused(gguf + link + " --force", "is a symbolic link");
  refused(gguf + old, "exists (hint: pass --force");
  refused(gguf + old + " --force", "safetensors");  // allowed: the model's load is what fails
  refused("export --format hf --type q8_0 --checkpoint " + ck + " --out " + db_in(dir, "hf"), "--type is for --format gguf");
  refused("export --format gguf --checkpoint " + dir.path().toStdString() + " --out " + db_in(dir, "x.gguf"),
          "is a folder, not a checkpoint file");
  make_dirs(db_in(dir, "thesis"));
  write_file_atomically(db_in(dir, "thesis/chapter1.tex"), "years of work");
  refused("export --format hf --checkpoint " + ck + " --out " + db_in(dir, "thesis") + " --force", "'chapter1.tex'");
  // --force replaces the export's own files only: never its input among them, a link or a FIFO.
  const std::string hf2 = db_in(dir, "hf2"), own = db_in(dir, "hf2/model.safetensors");
  make_dirs(hf2);
  write_file_atomically(own, "not a model");
  refused("export --format hf --checkpoint " + own + " --out " + hf2 + " --force", "is what this command reads");
  QCOMPARE(::symlink(notes.c_str(), (hf2 + "/config.json").c_str()), 0);
  refused("export --format hf --checkpoint " + ck + " --out " + hf2 + " --force", "is a symbolic link");
  QCOMPARE(::unlink((hf2 + "/config.json").c_str()), 0);
  QCOMPARE(::mkfifo((hf2 + "/vocab.json").c_str(), 0600), 0);
  refused("export --format hf --checkpoint " + ck + " --out " + hf2 + " --force", "is a FIFO");
  QVERIFY(read_file(own) == "not a model" && read_file(notes) == "mine");
  QVERIFY(::access(fifo.c_str(), F_OK) == 0 && read_file(old) == "an earlier export");
  QCOMPARE(tokamak_line("runs list --db " + db, &out, true), 0);  // the store was never touched
}

void TestStoreExport::cliEndToEnd() {
  QVERIFY2(path_exists(test::tokamak_bin().toStdString()),
           "TOKAMAK_TOKAMAK_BIN does not name the built CLI (run the suite through ctest)");
  QTemporaryDir dir;
  std::string db = db_in(dir);
  {
    RunStore store(db);
    fill(store);
  }
  std::string out;
  QCOMPARE(tokamak_line("runs list --db " + db, &out), 0);
  QVERIFY2(out.find("tf32") != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs compare 1 2 --db " + db, &out), 0);
  QVERIFY2(out.find("2.50×") != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs show 1 --db " + db, &out), 0);
  std::string json = db_in(dir, "e.json"), json2 = db_in(dir, "e2.json"), db2 = db_in(dir, "b.db");
  QCOMPARE(tokamak_line("runs export --format json --out " + json + " --db " + db), 0);
  QCOMPARE(tokamak_line("runs import " + json + " --db " + db2), 0);
  QCOMPARE(tokamak_line("runs export --format json --out " + json2 + " --db " + db2), 0);
  QCOMPARE(read_file(json2), read_file(json));
  QCOMPARE(tokamak_line("runs show 99 --db " + db, &out, true), 1);
  QVERIFY2(out.find("tokamak: no run 99 in " + db) != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs import " + json + " --db " + db2, &out, true), 1);
  QVERIFY2(out.find("is already in") != std::string::npos, out.c_str());
  QCOMPARE(tokamak_line("runs tag 1 --add fast --add a100 --remove ladder --notes \"second look\" --db " + db2, &out),
           0);
  QCOMPARE(out, std::string("[\"a100\",\"fast\"]\n"));
  QCOMPARE(tokamak_line("runs delete 2 --db " + db2), 0);
  QCOMPARE(tokamak_line("runs show 2 --db " + db2), 1);
}

QTEST_GUILESS_MAIN(TestStoreExport)
#include "test_store_export.moc"
