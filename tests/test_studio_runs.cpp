// The studio's runs panel on a real run store (offscreen): the browser's columns, sort, filter, tag editing
// and live refresh; compare (curve point counts, speedup, config diff); export in every format (the same
// bytes as `tokamak runs export`), plot export, import, re-run/resume signals, delete, and the errors shown
// for bad inputs. With TOKAMAK_SCREENSHOT_DB set it also grabs the compare view for the docs.
#include <QComboBox>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <cmath>
#include <map>
#include <set>

#include "engine/base/config/config.h"
#include "engine/base/config/hf_config.h"
#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "tests/test_store_fakes.h"
#include "ui/history/compare_view.h"
#include "ui/history/summary_table.h"
#include "ui/history/sample_compare.h"
#include "ui/plots/phase_bars.h"
#include "ui/plots/speed_of_light_bars.h"
#include "ui/plots/speedup_waterfall.h"
#include "ui/plots/qcp.h"
#include "ui/history/runs_model.h"
#include "ui/history/runs_panel.h"

using namespace tokamak;
using namespace tokamak::test;
using namespace tokamak::ui;

namespace {

constexpr int kSteps = 20;  // logged steps per fake run; val loss every 5th
const char* kBaseConfig =
    R"({"speed":{"precision":"fp32","attention":"buffered-mask"},"train":{"steps":20},"optimizer":{"lr":0.002}})";
const char* kFastConfig =
    R"({"speed":{"precision":"bf16","attention":"sdpa","activation_checkpointing":true},"train":{"steps":20},"optimizer":{"lr":0.002}})";

// A finished run with constant tok/s (so its steady tok/s is exact) and a checkpoint when given.
int64_t addRun(RunStore& store, const std::string& uid, const std::string& name, const char* config, double tokS,
               double created, const std::string& checkpoint = {}) {
  int64_t id = 0;
  store.transaction([&] {
    RunStart start = fake_start(uid, name, config);
    id = store.begin_run(start, created, 0);
    std::vector<MetricRow> rows;
    for (int i = 1; i <= kSteps; ++i) {
      MetricRow r;
      r.step = i;
      r.set("tokens", 1024.0 * i);
      r.set("wall_s", 0.1 * i);
      r.set("train_loss", 10.0 / (i + 1));
      r.set("tok_s", tokS);
      r.set("mem_peak", 64.0 * 1024 * 1024 * (tokS / 10000));
      if (i % 5 == 0) r.set("val_loss", 11.0 / (i + 1));
      rows.push_back(r);
    }
    store.add_metrics(id, rows);
    if (!checkpoint.empty()) store.add_checkpoint(id, {kSteps, checkpoint, created + 2});
    store.end_run(id, "finished", "", created + 3);
  });
  return id;
}

QString displayed(RunsPanel& panel, int proxyRow, int column) {
  return panel.proxyModel()->index(proxyRow, column).data().toString();
}

int rowOfName(RunsPanel& panel, const QString& name) {
  for (int r = 0; r < panel.proxyModel()->rowCount(); ++r)
    if (displayed(panel, r, RunsTableModel::Name) == name) return r;
  return -1;
}

}  // namespace

class TestStudioRuns : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void initTestCase();
  void init();
  void cleanup();
  void listsRunsWithColumns();
  void sorts_data();
  void sorts();
  void filters_data();
  void filters();
  void editsTagsAndNotes();
  void showsRunAddedWhileOpen();
  void comparePlotsCurves_data();
  void comparePlotsCurves();
  void comparePicksAnyMetric();
  void compareScoreboardAndDiff();
  void compareDrawsStepProfiles();
  void compareDrawsALadderWaterfall();
  void compareHoldsKindsAgainstTheirFloors();
  void compareAnyMetricAsXAxis();
  void compareGroupsSeedsIntoABand();
  void groupsAgainstTheBaselinesGroupSayIfResolved();
  void groupsCountFailedAndCensoredRuns();
  void compareGroupsByNameOrTag();
  void compareSummarisesMetrics();
  void repeatsARunWithNewSeeds();
  void compareShowsSamplesSideBySide();
  void compareFiltersSamplesByPrompt();
  void exportsRuns_data();
  void exportsRuns();
  void exportsPlot_data();
  void exportsPlot();
  void importAddsRuns();
  void rerunAndResumeEmitConfig();
  void exportsAModelForHuggingFace();
  void evaluatesARun();
  void deleteAsksFirst();
  void showsErrors_data();
  void showsErrors();
  void screenshot();

 private:
  QTemporaryDir home_;  // XDG_DATA_HOME: the default database of the tests, never the user's
  std::unique_ptr<QTemporaryDir> dir_;
  QString db_;
  int64_t base_ = 0, fast_ = 0;
  QString checkpoint_;

  // A run of the tiny model with a real checkpoint (step 20), for the actions that start tokamak-engine on it.
  int64_t addTinyRun(const std::string& uid) {
    const std::string ckpt = save_tiny_checkpoint(dir_->filePath(QStringLiteral("ckpts")).toStdString(), 20, uid);
    RunStore store(db_.toStdString());
    return addRun(store, uid, "tiny", "{}", 1000, 1717001200, ckpt);
  }
};

void TestStudioRuns::initTestCase() {
  QVERIFY(home_.isValid());
  qputenv("XDG_DATA_HOME", home_.path().toUtf8());
}

void TestStudioRuns::init() {
  dir_ = std::make_unique<QTemporaryDir>();
  QVERIFY(dir_->isValid());
  db_ = dir_->filePath(QStringLiteral("runs.db"));
  checkpoint_ = dir_->filePath(QStringLiteral("fast.pt"));
  QFile ckpt(checkpoint_);
  QVERIFY(ckpt.open(QIODevice::WriteOnly));
  ckpt.write("not really a checkpoint");
  ckpt.close();
  RunStore store(db_.toStdString());
  base_ = addRun(store, "uid-base", "baseline", kBaseConfig, 10000, 1717000000);
  fast_ = addRun(store, "uid-fast", "all switches", kFastConfig, 25000, 1717000600, checkpoint_.toStdString());
}

void TestStudioRuns::cleanup() { dir_.reset(); }

void TestStudioRuns::listsRunsWithColumns() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
  QCOMPARE(panel.databasePath(), db_);
  QCOMPARE(panel.proxyModel()->rowCount(), 2);
  QCOMPARE(panel.proxyModel()->columnCount(), int(RunsTableModel::ColumnCount));
  QCOMPARE(panel.proxyModel()->headerData(RunsTableModel::TokS, Qt::Horizontal).toString(), QStringLiteral("tok/s"));
  QVERIFY(panel.proxyModel()
              ->headerData(RunsTableModel::TokS, Qt::Horizontal, Qt::ToolTipRole)
              .toString()
              .contains("last"));
  int base = rowOfName(panel, QStringLiteral("baseline"));
  int fast = rowOfName(panel, QStringLiteral("all switches"));
  QVERIFY(base >= 0 && fast >= 0);
  QCOMPARE(displayed(panel, base, RunsTableModel::Model), QStringLiteral("mini"));
  QCOMPARE(displayed(panel, base, RunsTableModel::Dataset), QStringLiteral("jargon"));
  // Switches name only what differs from this build's defaults (precision auto, sdpa and fused AdamW are the
  // defaults): a run that chose fp32 or bf16 says so.
  QCOMPARE(displayed(panel, base, RunsTableModel::Switches), QStringLiteral("buffered-mask, fp32"));
  QCOMPARE(displayed(panel, fast, RunsTableModel::Switches), QStringLiteral("activation-checkpointing, bf16"));
  QCOMPARE(displayed(panel, base, RunsTableModel::TokS), QStringLiteral("10K"));
  QCOMPARE(displayed(panel, fast, RunsTableModel::TokS), QStringLiteral("25K"));
  QCOMPARE(displayed(panel, fast, RunsTableModel::BestVal), QString::number(11.0 / 21, 'f', 4));
  QCOMPARE(displayed(panel, fast, RunsTableModel::PeakMem), QStringLiteral("168 MB"));
  QCOMPARE(displayed(panel, base, RunsTableModel::Mfu), QStringLiteral("-"));
  QCOMPARE(displayed(panel, base, RunsTableModel::Status), QStringLiteral("finished"));
  QCOMPARE(displayed(panel, base, RunsTableModel::Date),
           QDateTime::fromSecsSinceEpoch(1717000000).toString(QStringLiteral("yyyy-MM-dd HH:mm")));
}

void TestStudioRuns::sorts_data() {
  QTest::addColumn<int>("column");
  QTest::addColumn<int>("order");
  QTest::addColumn<QString>("first");
  QTest::newRow("name ascending") << int(RunsTableModel::Name) << int(Qt::AscendingOrder) << "all switches";
  QTest::newRow("name descending") << int(RunsTableModel::Name) << int(Qt::DescendingOrder) << "baseline";
  QTest::newRow("date newest first") << int(RunsTableModel::Date) << int(Qt::DescendingOrder) << "all switches";
  // 25K must sort above 10K as a number, not below it as text ("10K" < "25K" either way; memory tells).
  QTest::newRow("tok/s descending") << int(RunsTableModel::TokS) << int(Qt::DescendingOrder) << "all switches";
  QTest::newRow("tok/s ascending") << int(RunsTableModel::TokS) << int(Qt::AscendingOrder) << "baseline";
  QTest::newRow("memory descending") << int(RunsTableModel::PeakMem) << int(Qt::DescendingOrder) << "all switches";
}

void TestStudioRuns::sorts() {
  QFETCH(int, column);
  QFETCH(int, order);
  QFETCH(QString, first);
  RunsPanel panel;
  panel.setDatabase(db_);
  panel.tableView()->sortByColumn(column, Qt::SortOrder(order));
  QCOMPARE(displayed(panel, 0, RunsTableModel::Name), first);
}

void TestStudioRuns::filters_data() {
  QTest::addColumn<QString>("text");
  QTest::addColumn<int>("rows");
  QTest::newRow("none") << "" << 2;
  QTest::newRow("switch") << "checkpointing" << 1;
  QTest::newRow("name, any case") << "BASELINE" << 1;
  QTest::newRow("status") << "finished" << 2;
  QTest::newRow("nothing") << "no such run" << 0;
}

void TestStudioRuns::filters() {
  QFETCH(QString, text);
  QFETCH(int, rows);
  RunsPanel panel;
  panel.setDatabase(db_);
  panel.filterEdit()->setText(text);
  QCOMPARE(panel.proxyModel()->rowCount(), rows);
}

void TestStudioRuns::editsTagsAndNotes() {
  RunsPanel panel;
  panel.setDatabase(db_);
  int row = rowOfName(panel, QStringLiteral("baseline"));
  QAbstractItemModel* m = panel.proxyModel();
  QVERIFY(m->flags(m->index(row, RunsTableModel::Tags)) & Qt::ItemIsEditable);
  QVERIFY(!(m->flags(m->index(row, RunsTableModel::Name)) & Qt::ItemIsEditable));
  QVERIFY(m->setData(m->index(row, RunsTableModel::Tags), QStringLiteral("reference,  cpu ,")));
  QVERIFY(m->setData(m->index(row, RunsTableModel::Notes), QStringLiteral("first try")));
  QCOMPARE(displayed(panel, row, RunsTableModel::Tags), QStringLiteral("reference, cpu"));
  RunStore store(db_.toStdString(), RunStore::Mode::existing);
  QCOMPARE(QString::fromStdString(store.run(base_).tags_json), QStringLiteral(R"(["reference","cpu"])"));
  QCOMPARE(QString::fromStdString(store.run(base_).notes), QStringLiteral("first try"));
  panel.filterEdit()->setText(QStringLiteral("reference"));  // tags are searchable
  QCOMPARE(panel.proxyModel()->rowCount(), 1);
}

void TestStudioRuns::showsRunAddedWhileOpen() {
  RunsPanel panel;
  panel.setDatabase(db_);
  panel.setPollInterval(100);
  panel.resize(1000, 700);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  panel.selectRuns({base_});
  QCOMPARE(panel.selectedRunIds(), QList<qint64>{base_});
  {
    RunStore writer(db_.toStdString());  // another connection, as a training process would be
    addRun(writer, "uid-new", "added later", kBaseConfig, 5000, 1717001200);
  }
  QTRY_COMPARE_WITH_TIMEOUT(panel.proxyModel()->rowCount(), 3, test::kPatienceMs);
  QVERIFY(rowOfName(panel, QStringLiteral("added later")) >= 0);
  QCOMPARE(panel.selectedRunIds(), QList<qint64>{base_});  // the refresh kept the selection
}

void TestStudioRuns::comparePlotsCurves_data() {
  QTest::addColumn<int>("metric");
  QTest::addColumn<int>("axis");
  QTest::addColumn<int>("points");
  QTest::addColumn<double>("lastX");
  QTest::newRow("train loss by step") << int(CompareView::PlotMetric::TrainLoss) << int(CompareView::XAxis::Step)
                                      << kSteps << 20.0;
  QTest::newRow("val loss by tokens") << int(CompareView::PlotMetric::ValLoss) << int(CompareView::XAxis::Tokens)
                                      << kSteps / 5 << 20480.0;
  QTest::newRow("tok/s by wall time") << int(CompareView::PlotMetric::TokS) << int(CompareView::XAxis::WallTime)
                                      << kSteps << 2.0;
  QTest::newRow("memory by step") << int(CompareView::PlotMetric::Memory) << int(CompareView::XAxis::Step) << kSteps
                                  << 20.0;
  QTest::newRow("MFU (none on CPU)") << int(CompareView::PlotMetric::Mfu) << int(CompareView::XAxis::Step) << 0 << 0.0;
}

void TestStudioRuns::comparePlotsCurves() {
  QFETCH(int, metric);
  QFETCH(int, axis);
  QFETCH(int, points);
  QFETCH(double, lastX);
  RunsPanel panel;
  panel.setDatabase(db_);
  panel.selectRuns({base_, fast_});
  QVERIFY(panel.compareRuns(panel.selectedRunIds()));
  CompareView* view = panel.compareView();
  view->setMetric(CompareView::PlotMetric(metric));
  view->setXAxis(CompareView::XAxis(axis));
  QCustomPlot* plot = view->plot();
  QCOMPARE(plot->graphCount(), 2);
  for (int g = 0; g < 2; ++g) {
    QCOMPARE(plot->graph(g)->dataCount(), points);
    if (points) QCOMPARE(plot->graph(g)->data()->at(points - 1)->key, lastX);
  }
  QVERIFY(plot->graph(0)->pen().color() != plot->graph(1)->pen().color());  // one colour per run
}

// A metric only one run recorded, under a name no studio code knows: the compare picker offers it after the
// five usual plots, and picking it draws that run's curve (the other run has no points).
void TestStudioRuns::comparePicksAnyMetric() {
  {
    RunStore store(db_.toStdString());
    store.transaction([&] {
      std::vector<MetricRow> rows;
      for (int i = 1; i <= kSteps; ++i) {
        MetricRow r;
        r.step = i;
        r.set("skipped_steps", i / 4, true);
        rows.push_back(r);
      }
      store.add_metrics(fast_, rows);
    });
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  CompareView* view = panel.compareView();
  const QStringList keys = view->metricKeys();
  QCOMPARE(keys.mid(0, 5), (QStringList{"train_loss", "val_loss", "tok_s", "mfu", "mem_peak"}));
  QVERIFY2(keys.contains("skipped_steps") && !keys.contains("tokens"), qPrintable(keys.join(", ")));
  QVERIFY(view->setMetricKey("skipped_steps"));
  QCOMPARE(view->findChild<QComboBox*>("compareMetric")->currentText(), QStringLiteral("skipped_steps"));
  QCOMPARE(view->plot()->graph(0)->dataCount(), 0);
  QCOMPARE(view->plot()->graph(1)->dataCount(), kSteps);
  QCOMPARE(view->plot()->graph(1)->data()->at(kSteps - 1)->value, double(kSteps / 4));
  QVERIFY(!view->setMetricKey("no_such_metric"));
  QCOMPARE(view->metricKey(), QStringLiteral("skipped_steps"));
}

// Two rungs with step profiles: one stacked bar each, each phase the mean of the reports after the first, the
// same numbers as the scoreboard's (and `runs compare`'s); the faster rung's bar shows which phase shrank.
void TestStudioRuns::compareDrawsStepProfiles() {
  std::vector<int64_t> ids;
  {
    RunStore store(db_.toStdString());
    for (double forward : {40.0, 10.0}) {
      store.transaction([&] {
        const int64_t id =
            store.begin_run(fake_start("uid-p" + std::to_string(int(forward)), "profiled"), 1717001000, 0);
        std::vector<MetricRow> rows;
        for (int i = 1; i <= 5; ++i) {
          MetricRow r;
          r.step = i;
          r.set("phase_data_ms", 1);
          r.set("phase_forward_ms", i == 1 ? 10 * forward : forward + i);  // mean of steps 2..5: forward + 3.5
          r.set("phase_backward_ms", 2 * forward);
          r.set("phase_optimizer_ms", 3);
          r.set("phase_other_ms", 0.5);
          rows.push_back(r);
        }
        store.add_metrics(id, rows);
        store.end_run(id, "finished", "", 1717001010);
        ids.push_back(id);
      });
    }
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({ids[0], ids[1], base_}));  // the third has no profile: an empty bar
  PhaseBars* bars = panel.compareView()->phaseBars();
  QCOMPARE(bars->runCount(), 3);
  QCOMPARE(bars->segment(0, Phase::kForward), 43.5);
  QCOMPARE(bars->segment(1, Phase::kForward), 13.5);
  QCOMPARE(bars->segment(1, Phase::kBackward), 20.0);
  QCOMPARE(bars->segmentBase(1, Phase::kOptimizer), 1 + 13.5 + 20.0);
  QCOMPARE(bars->segment(0, Phase::kForward), panel.compareView()->scoreboard().rows[0].phase_ms[1]);
  for (int p = 0; p < kPhaseCount; ++p) QCOMPARE(bars->segment(2, Phase(p)), 0.0);
  QVERIFY(!bars->bars(Phase::kAllreduce)->visible());
}

// A run profiled on a GPU machine, exported there and imported here (a stated fixture: GPT-2 124M's kinds as an
// H200 sitting read them, the limits its datasheet and copy gave), and one profiled on this CPU, stored by
// bench: the view draws both side by side, each kind's bar at its time with the floor marked, and says over a
// bar how close it came and what to switch; a run nobody profiled has no bars.
void TestStudioRuns::compareHoldsKindsAgainstTheirFloors() {
  const QString fixture = dir_->filePath(QStringLiteral("h200.json"));
  {
    QFile f(fixture);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(R"json({"tokamak_export": 1, "runs": [{"uid": "uid-h200", "name": "gpt2 fused bf16", "status": "finished",
      "created": 1717002000, "metrics": [], "samples": [], "checkpoints": [],
      "speed_of_light": {"matmul_flops": 989e12, "matmul_source": "datasheet (NVIDIA H200, bf16)",
        "memory_bytes_per_s": 4.2e12, "memory_source": "measured: copies of 65.5 kB to 1.07 GB on the GPU",
        "kinds": [{"kind": "matmul", "ms": 64, "calls": 400, "flops": 5.8e13, "bytes": 0, "floor_ms": 58.6, "bound": "compute"},
                  {"kind": "attention", "ms": 17, "calls": 48, "flops": 3.7e12, "bytes": 0, "floor_ms": 3.75, "bound": "compute"},
                  {"kind": "norm", "ms": 21, "calls": 150, "flops": 0, "bytes": 2.5e10, "floor_ms": 5.95, "bound": "memory"},
                  {"kind": "other", "ms": 14, "calls": 900, "flops": 0, "bytes": 0, "floor_ms": -1, "bound": ""}]}}]})json");
  }
  {
    RunStore store(db_.toStdString());
    QCOMPARE(import_runs(store, fixture.toStdString()).imported.size(), size_t{1});
    store.set_speed_of_light(fast_, {831e9,
                                     5.4e9,
                                     "measured: 2048³ bf16 GEMM, 2 threads",
                                     "measured: copies",
                                     {{"matmul", 1388.9, 272, 9.66e9, 0, 11.63, "compute"},
                                      {"norm", 283.7, 125, 0, 3.77e7, 0.45, "memory"},
                                      {"optimizer", 303.3, 399, 0, 2.03e8, 2.41, "memory"}}});
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  const int64_t h200 = RunStore(db_.toStdString()).find_uid("uid-h200");
  QVERIFY(panel.compareRuns({h200, fast_, base_}));
  SpeedOfLightBars* bars = panel.compareView()->speedOfLight();
  QCOMPARE(bars->profiledRuns(), 2);  // the base run was not profiled
  // Every kind either run measured, in the profile's order.
  QCOMPARE(bars->kinds(), (QStringList{"matmul", "attention", "norm", "optimizer", "other"}));
  QCOMPARE(bars->time(0, 0), 64.0);
  QCOMPARE(bars->floor(0, 0), 58.6);
  QCOMPARE(bars->time(1, 0), 1388.9);
  QVERIFY(std::isnan(bars->time(1, 1)));  // the CPU run measured no attention here
  QCOMPARE(bars->floor(0, 4), -1.0);      // "other": no floor
  const QString norm = bars->toolTip(0, 2);
  QVERIFY2(norm.contains("norm, #") && norm.contains("21.00 ms per step"), qPrintable(norm));
  QVERIFY2(norm.contains("floor 5.95 ms") && norm.contains("the memory bandwidth"), qPrintable(norm));
  QVERIFY2(norm.contains("28.3% of the limit reached"), qPrintable(norm));
  QVERIFY2(norm.contains("switches that act on it: speed.layers=fused"), qPrintable(norm));
  QVERIFY2(bars->toolTip(0, 4).contains("no floor: its work is not counted"), qPrintable(bars->toolTip(0, 4)));
  QVERIFY2(bars->toolTip(0, 0).contains("the matmul rate"), qPrintable(bars->toolTip(0, 0)));
  // Compared again with one profiled run: its bars alone, the other run none.
  QVERIFY(panel.compareRuns({base_, fast_}));
  QCOMPARE(bars->profiledRuns(), 1);
  QCOMPARE(bars->kinds(), (QStringList{"matmul", "norm", "optimizer"}));
}

// Three rungs at 10K, 25K and 20K tok/s: the waterfall's bars go 0→1, 1→2.5 (a gain of ×2.50 over the
// previous rung) and 2.5→2 (a loss: ×0.80), each labelled with its own step, in the order compared.
void TestStudioRuns::compareDrawsALadderWaterfall() {
  int64_t third = 0;
  {
    RunStore store(db_.toStdString());
    third = addRun(store, "uid-third", "third rung", kFastConfig, 20000, 1717000900);
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_, third}));
  SpeedupWaterfall* w = panel.compareView()->waterfall();
  QCOMPARE(w->rungCount(), 3);
  QCOMPARE(w->stepSpeedup(0), 1.0);
  QCOMPARE(w->stepSpeedup(1), 2.5);
  QCOMPARE(w->stepSpeedup(2), 0.8);
  QCOMPARE(w->cumulative(2), 2.0);
  QCOMPARE(w->labelOf(1), QStringLiteral("×2.50"));
  QCOMPARE(w->labelOf(2), QStringLiteral("×0.80"));
  // Drawn as floating bars: rung 2 spans 2.0..2.5 in the loss colour, rung 1 spans 1.0..2.5 as a gain.
  QCPBars *base = w->baseBars(), *gain = w->gainBars(), *loss = w->lossBars();
  QCOMPARE(gain->barBelow(), base);  // stacked: the visible bars float on the base
  QCOMPARE(loss->barBelow(), gain);
  QCOMPARE(base->data()->at(1)->value, 1.0);
  QCOMPARE(gain->data()->at(1)->value, 1.5);
  QCOMPARE(loss->data()->at(1)->value, 0.0);
  QCOMPARE(base->data()->at(2)->value, 2.0);
  QCOMPARE(gain->data()->at(2)->value, 0.0);
  QCOMPARE(loss->data()->at(2)->value, 0.5);
  panel.compareView()->setBaseline(1);  // the waterfall follows the order, not the baseline
  QCOMPARE(w->stepSpeedup(1), 2.5);
}

// Any recorded metric as the X axis: train loss against tok/s puts each run's points at its own tok/s (a
// Pareto view of a ladder), as points; an unknown key is refused; step returns to curves.
void TestStudioRuns::compareAnyMetricAsXAxis() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  CompareView* view = panel.compareView();
  QVERIFY(!view->setXAxisKey("no_such_metric"));
  QVERIFY(view->setXAxisKey("tok_s"));
  QCOMPARE(view->xAxisKey(), QStringLiteral("tok_s"));
  QVERIFY(view->setMetricKey("train_loss"));
  QCPGraph* fast = view->plot()->graph(1);
  QCOMPARE(fast->dataCount(), kSteps);
  for (int i = 0; i < fast->dataCount(); ++i) QCOMPARE(fast->data()->at(i)->key, 25000.0);
  QCOMPARE(view->plot()->graph(0)->data()->at(0)->key, 10000.0);
  QCOMPARE(fast->lineStyle(), QCPGraph::lsNone);
  QCOMPARE(view->plot()->xAxis->label(), QStringLiteral("tok_s"));
  view->setXAxis(CompareView::XAxis::Step);
  QCOMPARE(view->xAxisKey(), QString());
  QCOMPARE(view->plot()->graph(1)->data()->at(kSteps - 1)->key, double(kSteps));
  QCOMPARE(view->plot()->graph(1)->lineStyle(), QCPGraph::lsLine);
}

// Three seeds of one config and one other run: grouped by "same config but seed", the seeds become one mean
// curve with a band (the run apart stays a curve of its own) and a row under the scoreboard; the band is
// min–max or ± one sample standard deviation; no grouping, four curves again.
void TestStudioRuns::compareGroupsSeedsIntoABand() {
  std::vector<int64_t> ids;
  const double rates[] = {10000, 20000, 60000};  // mean 30K, std sqrt(700)K ≈ 26.5K: the band differs from min–max
  {
    RunStore store(db_.toStdString());
    for (int seed = 1; seed <= 3; ++seed) {
      const std::string config = R"({"train":{"steps":20,"seed":)" + std::to_string(seed) + "}}";
      ids.push_back(addRun(store, "uid-seed" + std::to_string(seed), "seeded-s" + std::to_string(seed), config.c_str(),
                           rates[seed - 1], 1717002000 + seed));
    }
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({ids[0], ids[1], ids[2], base_}));
  CompareView* view = panel.compareView();
  QVERIFY(view->setMetricKey("tok_s"));
  QCOMPARE(view->plot()->graphCount(), 4);
  QCOMPARE(view->scoreTable()->rowCount(), 4);
  view->groupBox()->setCurrentIndex(view->groupBox()->findData(QStringLiteral("seed")));  // as a user picks it
  QCOMPARE(view->grouping(), QStringLiteral("seed"));
  QCOMPARE(view->plot()->graphCount(), 4);  // min, max (filled to min), mean; and the other run
  const auto graphs = [&] {
    std::map<QString, QCPGraph*> by;
    for (int i = 0; i < view->plot()->graphCount(); ++i) {
      QCPGraph* g = view->plot()->graph(i);
      by[g->name().section(QLatin1Char('('), -1)] = g;  // "mean)", "min)", "max)", "mean − std)", ...
    }
    return by;
  };
  auto g = graphs();
  QCPGraph *mean = g["mean)"], *lo = g["min)"], *hi = g["max)"];
  QVERIFY(mean && lo && hi);
  QVERIFY2(mean->name().startsWith("seeded ×3"), qPrintable(mean->name()));
  QCOMPARE(mean->dataCount(), kSteps);
  QCOMPARE(mean->data()->at(0)->value, 30000.0);
  QCOMPARE(lo->data()->at(kSteps - 1)->value, 10000.0);
  QCOMPARE(hi->data()->at(kSteps - 1)->value, 60000.0);
  QCOMPARE(hi->channelFillGraph(), lo);
  // The group's row under the runs: mean tok/s with its spread; then the run apart, a group of one, named with why it
  // has no row of means and no verdict.
  QCOMPARE(view->scoreTable()->rowCount(), 6);
  QVERIFY2(view->scoreTable()->item(5, 0)->text().endsWith("×1: no verdict"),
           qPrintable(view->scoreTable()->item(5, 0)->text()));
  QCOMPARE(view->scoreTable()->item(5, 1)->text(), QStringLiteral("a group needs 2 runs or more"));
  QVERIFY2(view->scoreTable()->item(4, 0)->text().startsWith("seeded ×3"),
           qPrintable(view->scoreTable()->item(4, 0)->text()));
  QCOMPARE(view->scoreTable()->item(4, 2)->text(), QStringLiteral("30K ± 26.5K"));
  QCOMPARE(view->scoreboard().groups.front().members, (std::vector<size_t>{0, 1, 2}));
  // The waterfall has one rung per group, at its mean, then the run apart: 30K, then that run's rate.
  SpeedupWaterfall* w = view->waterfall();
  QCOMPARE(w->rungCount(), 2);
  QCOMPARE(w->stepSpeedup(1), view->scoreboard().rows[3].tok_s / 30000.0);
  view->setBand(CompareView::BandKind::Std);
  g = graphs();
  lo = g["mean − std)"], hi = g["mean + std)"];
  QVERIFY(lo && hi);
  const double std = std::sqrt(700.0) * 1000;
  QVERIFY(std::abs(lo->data()->at(0)->value - (30000 - std)) < 1e-6);
  QVERIFY(std::abs(hi->data()->at(0)->value - (30000 + std)) < 1e-6);
  QVERIFY(view->setGrouping(QStringLiteral("none")));
  QCOMPARE(view->plot()->graphCount(), 4);
  QVERIFY(!view->plot()->graph(0)->name().contains(QLatin1Char('(')));
  QCOMPARE(view->scoreTable()->rowCount(), 4);
  QCOMPARE(w->rungCount(), 4);       // ungrouped: a rung per run again
  QCOMPARE(w->stepSpeedup(1), 2.0);  // 20K after 10K
}

// Two setups of three seeds each, the first run the baseline: the other group's tok/s cell says "resolved" (Welch's
// t-test against the baseline's group, docs/COMPARING.md) with the interval and p in its tooltip.
void TestStudioRuns::groupsAgainstTheBaselinesGroupSayIfResolved() {
  std::vector<int64_t> ids;
  {
    RunStore store(db_.toStdString());
    const double slow[] = {10000, 10100, 9950}, fast[] = {15000, 15100, 14900};
    for (int seed = 1; seed <= 3; ++seed) {
      const std::string a = R"({"train":{"steps":20,"seed":)" + std::to_string(seed) + "}}";
      const std::string b = R"({"speed":{"fused_adamw":false},"train":{"steps":20,"seed":)" + std::to_string(seed) + "}}";
      ids.push_back(addRun(store, "uid-slow" + std::to_string(seed), "slow-s" + std::to_string(seed), a.c_str(),
                           slow[seed - 1], 1717003000 + seed));
      ids.push_back(addRun(store, "uid-fast" + std::to_string(seed), "fast-s" + std::to_string(seed), b.c_str(),
                           fast[seed - 1], 1717003100 + seed));
    }
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns(QList<qint64>(ids.begin(), ids.end())));
  CompareView* view = panel.compareView();
  QVERIFY(view->setGrouping(QStringLiteral("seed")));
  QCOMPARE(int(view->scoreboard().groups.size()), 2);
  const int runs = int(ids.size());
  const int baseGroup = view->scoreboard().groups[0].holds_baseline ? 0 : 1;
  QTableWidgetItem* other = view->scoreTable()->item(runs + (1 - baseGroup), 2);
  QVERIFY2(other->text().endsWith(" · resolved"), qPrintable(other->text()));
  QVERIFY2(other->toolTip().contains("Welch's t-test") && other->toolTip().contains("95% CI"),
           qPrintable(other->toolTip()));
  QVERIFY(!view->scoreTable()->item(runs + baseGroup, 2)->text().contains("resolved"));  // the baseline's own
  // The waterfall's step between the two groups says it too: p under the ×1.50 (or ×0.67).
  SpeedupWaterfall* w = view->waterfall();
  QCOMPARE(w->rungCount(), 2);
  QVERIFY2(w->labelOf(1).contains("\np ") && w->labelOf(0) == QStringLiteral("×1.00\n3 of 3"), qPrintable(w->labelOf(1)));
  // Seeds that overlap: the step is "not resolved".
  {
    RunStore store(db_.toStdString());
    const double a[] = {10000, 12000}, b[] = {11000, 11500};
    for (int seed = 1; seed <= 2; ++seed) {
      const std::string ca = R"({"train":{"steps":21,"seed":)" + std::to_string(seed) + "}}";
      const std::string cb = R"({"speed":{"prefetch":false},"train":{"steps":21,"seed":)" + std::to_string(seed) + "}}";
      ids.push_back(addRun(store, "uid-na" + std::to_string(seed), "na-s" + std::to_string(seed), ca.c_str(), a[seed - 1],
                           1717003200 + seed));
      ids.push_back(addRun(store, "uid-nb" + std::to_string(seed), "nb-s" + std::to_string(seed), cb.c_str(), b[seed - 1],
                           1717003300 + seed));
    }
  }
  panel.refresh();
  QVERIFY(panel.compareRuns(QList<qint64>(ids.end() - 4, ids.end())));
  QVERIFY(view->setGrouping(QStringLiteral("seed")));
  QCOMPARE(w->rungCount(), 2);
  QVERIFY2(w->labelOf(1).endsWith("\nnot resolved\n2 of 2"), qPrintable(w->labelOf(1)));
}

// Three seeds against three of another setup, one of which never reached the target and one failed (no metrics), then
// a run alone. Every group says how many runs its numbers stand on; the waterfall counts a run that never reached the
// target as censored (not as a failure) when it goes by time to target; the run alone says it has no verdict and why;
// with that run as the baseline, the groups say why they have no verdict.
void TestStudioRuns::groupsCountFailedAndCensoredRuns() {
  std::vector<int64_t> ids;
  {
    RunStore store(db_.toStdString());
    const auto add = [&](const std::string& name, const std::string& speed, int seed, double tokS, double ttt) {
      const std::string config = R"({"eval":{"target_val_loss":3.0},"speed":{)" + speed +
                                 R"(},"train":{"steps":20,"seed":)" + std::to_string(seed) + "}}";
      store.transaction([&] {
        const int64_t id = store.begin_run(fake_start("uid-" + name, name, config), 1717004000.0 + double(ids.size()), 0);
        std::vector<MetricRow> rows;
        for (int i = 1; std::isfinite(tokS) && i <= kSteps; ++i) {  // a failed run logged nothing
          MetricRow r;
          r.step = i;
          r.set("tok_s", tokS);
          if (i % 5 == 0) r.set("val_loss", 11.0 / (i + 1));
          if (i == kSteps && std::isfinite(ttt)) r.set("time_to_target_s", ttt);
          rows.push_back(r);
        }
        store.add_metrics(id, rows);
        store.end_run(id, std::isfinite(tokS) ? "finished" : "failed", "", 1717004100.0);
        ids.push_back(id);
      });
    };
    const double nan = std::nan("");
    for (int seed = 1; seed <= 3; ++seed) add("a-s" + std::to_string(seed), "", seed, 10000 + seed * 50, 100 + seed);
    add("b-s1", R"("prefetch":false)", 1, 15000, 50);
    add("b-s2", R"("prefetch":false)", 2, 15100, nan);  // never reached the target
    add("b-s3", R"("prefetch":false)", 3, nan, nan);    // failed
    add("c", R"("fused_adamw":false)", 1, 12000, 80);
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns(QList<qint64>(ids.begin(), ids.end())));
  CompareView* view = panel.compareView();
  QVERIFY(view->setGrouping(QStringLiteral("seed")));
  QTableWidget* t = view->scoreTable();
  QVERIFY2(t->item(7, 0)->text().startsWith("a ×3 (mean, 3 of 3 complete)"), qPrintable(t->item(7, 0)->text()));
  QVERIFY2(t->item(8, 0)->text().startsWith("b ×3 (mean, 2 of 3 complete)"), qPrintable(t->item(8, 0)->text()));
  SpeedupWaterfall* w = view->waterfall();
  QCOMPARE(w->rungCount(), 3);
  QCOMPARE(w->labelOf(0), QStringLiteral("×1.00\n3 of 3"));
  QCOMPARE(w->labelOf(1).section(QLatin1Char('\n'), 1), QStringLiteral("not resolved\n2 of 3 (1 failed)"));
  QCOMPARE(w->labelOf(2).section(QLatin1Char('\n'), 1), QStringLiteral("no verdict (needs ≥ 2 runs)"));
  view->waterfallBy()->setCurrentIndex(1);  // by time to target: a run that got nowhere near it is censored
  QCOMPARE(w->labelOf(1).section(QLatin1Char('\n'), 1), QStringLiteral("not resolved\n1 of 3 (2 censored)"));
  QCOMPARE(w->stepSpeedup(1), (101.0 + 102 + 103) / 3 / 50);
  // The run alone as the baseline: no group can be tested against it, and each says so.
  view->setBaseline(6);
  for (int row : {7, 8})
    QVERIFY2(t->item(row, 0)->text().endsWith(": no verdict, the baseline's group (c ×1) has one run: a verdict needs "
                                              "2 runs a side"),
             qPrintable(t->item(row, 0)->text()));
}

// Grouping by a name pattern (its first capture group) or by the first tag; a pattern that does not compile
// is refused with the engine's one-line reason and the grouping stays as it was.
void TestStudioRuns::compareGroupsByNameOrTag() {
  int64_t a1, a2, b1;
  {
    RunStore store(db_.toStdString());
    a1 = addRun(store, "uid-a1", "flash-s1", kFastConfig, 20000, 1717003001);
    a2 = addRun(store, "uid-a2", "flash-s2", kBaseConfig, 30000, 1717003002);  // other config, same name stem
    b1 = addRun(store, "uid-b1", "plain-s1", kBaseConfig, 10000, 1717003003);
    store.set_tags(a1, R"(["ladder"])", "");
    store.set_tags(b1, R"(["ladder","x"])", "");
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({a1, a2, b1}));
  CompareView* view = panel.compareView();
  QVERIFY(view->setMetricKey("tok_s"));
  QVERIFY(view->setGrouping(QStringLiteral("name:(.*)-s[0-9]+")));
  QCOMPARE(view->scoreboard().groups.size(), size_t(1));
  QCOMPARE(view->scoreboard().groups.front().label, std::string("flash ×2"));
  QCOMPARE(view->scoreboard().groups.front().mean.tok_s, 25000.0);
  QCOMPARE(view->plot()->graphCount(), 4);  // the flash band (3 graphs) and plain-s1
  QVERIFY(view->setGrouping(QStringLiteral("tag")));
  QCOMPARE(view->scoreboard().groups.front().label, std::string("ladder ×2"));
  QCOMPARE(view->scoreboard().groups.front().members, (std::vector<size_t>{0, 2}));
  QVERIFY(!view->setGrouping(QStringLiteral("name:(unclosed")));
  QVERIFY2(view->groupError().contains("is not a regular expression"), qPrintable(view->groupError()));
  QCOMPARE(view->grouping(), QStringLiteral("tag"));
  QCOMPARE(view->scoreboard().groups.front().label, std::string("ladder ×2"));
}

// Every metric summarised the chosen way (as `runs compare --stat`), and the choice outlives the view.
void TestStudioRuns::compareSummarisesMetrics() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  SummaryTable* summary = panel.compareView()->summaryTable();
  QTableWidget* t = summary->table();
  const auto row = [&](const QString& key) {
    for (int r = 0; r < t->rowCount(); ++r)
      if (t->item(r, 0)->text() == key) return r;
    return -1;
  };
  QVERIFY(summary->setStat(QStringLiteral("last")));
  const int loss = row(QStringLiteral("train_loss"));
  QVERIFY(loss >= 0);
  QVERIFY(std::abs(t->item(loss, 1)->text().toDouble() - 10.0 / (kSteps + 1)) < 1e-5);  // shown to 6 digits
  QVERIFY(summary->setStat(QStringLiteral("max")));
  QCOMPARE(t->item(loss, 1)->text().toDouble(), 5.0);  // step 1: 10 / 2
  QVERIFY(summary->setStat(QStringLiteral("mean:2")));
  QVERIFY(std::abs(t->item(loss, 2)->text().toDouble() - (10.0 / 20 + 10.0 / 21) / 2) < 1e-5);
  QVERIFY2(t->horizontalHeaderItem(0)->text().contains("mean of last 2"),
           qPrintable(t->horizontalHeaderItem(0)->text()));
  QVERIFY(!summary->setStat(QStringLiteral("median")));
  QCOMPARE(summary->stat(), QStringLiteral("mean:2"));
  QCOMPARE(row(QStringLiteral("tokens")), -1);  // positions, not metrics
  SummaryTable again;                           // a new view (a new session) starts from the remembered choice
  QCOMPARE(again.stat(), QStringLiteral("mean:2"));
  QVERIFY(again.setStat(QStringLiteral("last")));
}

// "Repeat with seeds" asks the main window to run copies of the run's config with seeds no run of the same
// experiment used, named NAME-sSEED; everything else in the config is the run's.
void TestStudioRuns::repeatsARunWithNewSeeds() {
  int64_t s1;
  {
    RunStore store(db_.toStdString());
    s1 = addRun(store, "uid-r1", "exp", R"({"train":{"steps":20,"seed":5},"name":"exp"})", 1000, 1717004001);
    addRun(store, "uid-r2", "exp-s9", R"({"train":{"steps":20,"seed":9},"name":"exp-s9"})", 1000, 1717004002);
    addRun(store, "uid-r3", "other", R"({"train":{"steps":30,"seed":40}})", 1000, 1717004003);
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QSignalSpy spy(&panel, &RunsPanel::repeatRequested);
  QVERIFY(panel.repeatWithSeeds(s1, 2));
  QCOMPARE(spy.count(), 1);
  const QStringList configs = spy.at(0).at(0).toStringList();
  QCOMPARE(configs.size(), 2);
  std::vector<std::string> jsons = {
      config_to_json(config_from_json(R"({"train":{"steps":20,"seed":5},"name":"exp"})"))};
  for (int k = 0; k < 2; ++k) {
    const QJsonObject c = QJsonDocument::fromJson(configs[k].toUtf8()).object();
    const int seed = 10 + k;  // after 9, the largest seed of this experiment (40 is another experiment's)
    QCOMPARE(c["train"].toObject()["seed"].toInt(), seed);
    QCOMPARE(c["train"].toObject()["steps"].toInt(), 20);
    QCOMPARE(c["name"].toString(), QStringLiteral("exp-s%1").arg(seed));
    jsons.push_back(configs[k].toStdString());
  }
  QCOMPARE(group_by_config(jsons), (std::vector<int>{0, 0, 0}));  // one experiment but for the seed
  QVERIFY(!panel.repeatWithSeeds(987654, 2));
  QVERIFY(panel.hasError());
  QCOMPARE(spy.count(), 1);
}

// Samples across runs: each run's column holds its sample nearest the chosen step (runs sample on their own
// schedules), with the step it was taken at and its prompt; no step chosen = each run's last sample.
void TestStudioRuns::compareShowsSamplesSideBySide() {
  {
    RunStore store(db_.toStdString());
    store.add_sample(base_, {10, "The", "The base at 10", 1717000001});
    store.add_sample(base_, {20, "The", "The base at 20", 1717000002});
    store.add_sample(fast_, {15, "The", "The fast at 15", 1717000003});
    store.add_sample(fast_, {30, "The", "The fast at 30", 1717000004});
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  SampleCompare* samples = panel.compareView()->sampleCompare();
  QTableWidget* t = samples->table();
  QCOMPARE(t->columnCount(), 2);
  QCOMPARE(t->item(2, 0)->text(), QStringLiteral("The base at 20"));  // the last of each
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("The fast at 30"));
  samples->setStep(18);
  QCOMPARE(t->item(0, 0)->text(), QStringLiteral("20"));
  QCOMPARE(t->item(0, 1)->text(), QStringLiteral("15"));
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("The fast at 15"));
  QCOMPARE(t->item(1, 0)->text(), QStringLiteral("The"));
  samples->setStep(12);
  QCOMPARE(t->item(2, 0)->text(), QStringLiteral("The base at 10"));
}

// Runs that sample from several prompts: the prompt picker keeps one prompt's samples, nearest the step.
void TestStudioRuns::compareFiltersSamplesByPrompt() {
  {
    RunStore store(db_.toStdString());
    store.add_sample(base_, {10, "The", "The base at 10", 1717000001});
    store.add_sample(base_, {10, "Once", "Once base at 10", 1717000001});
    store.add_sample(base_, {20, "The", "The base at 20", 1717000002});
    store.add_sample(fast_, {20, "Once", "Once fast at 20", 1717000003});
  }
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  SampleCompare* samples = panel.compareView()->sampleCompare();
  QTableWidget* t = samples->table();
  QCOMPARE(samples->prompts(), (QStringList{"The", "Once"}));
  QVERIFY(samples->setPrompt(QStringLiteral("Once")));
  QCOMPARE(t->item(2, 0)->text(), QStringLiteral("Once base at 10"));  // its only "Once" sample
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("Once fast at 20"));
  QVERIFY(samples->setPrompt(QStringLiteral("The")));
  QCOMPARE(t->item(2, 0)->text(), QStringLiteral("The base at 20"));
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("no samples"));  // the fast run never sampled from "The"
  QVERIFY(!samples->setPrompt(QStringLiteral("Never")));
  QVERIFY(panel.compareRuns({base_, fast_}));  // a reload keeps the chosen prompt
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("no samples"));
  QVERIFY(samples->setPrompt(QString()));
  QCOMPARE(t->item(2, 1)->text(), QStringLiteral("Once fast at 20"));
}

void TestStudioRuns::compareScoreboardAndDiff() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QVERIFY(panel.compareRuns({base_, fast_}));
  CompareView* view = panel.compareView();
  QCOMPARE(view->scoreboard().rows.size(), size_t(2));
  QCOMPARE(view->scoreboard().rows[0].tok_s, 10000.0);
  QCOMPARE(view->scoreboard().rows[1].speedup, 2.5);  // 25K over a 10K baseline
  QCOMPARE(view->scoreTable()->item(1, 3)->text(), QStringLiteral("2.50×"));
  QVERIFY(view->scoreTable()->item(0, 0)->text().contains(QStringLiteral("baseline")));
  view->setBaseline(1);
  QCOMPARE(view->scoreboard().rows[0].speedup, 0.4);
  QCOMPARE(view->scoreTable()->item(0, 3)->text(), QStringLiteral("0.40×"));
  // Only the keys that differ; train.steps and optimizer.lr are equal and must not be listed.
  QStringList keys;
  for (int r = 0; r < view->diffTable()->rowCount(); ++r) keys << view->diffTable()->item(r, 0)->text();
  QCOMPARE(keys, (QStringList{"speed.activation_checkpointing", "speed.attention", "speed.precision"}));
  QCOMPARE(view->diffTable()->item(2, 1)->text(), QStringLiteral("fp32"));
  QCOMPARE(view->diffTable()->item(2, 2)->text(), QStringLiteral("bf16"));
  QCOMPARE(view->diffTable()->item(0, 1)->text(), QStringLiteral("-"));  // absent in the baseline's config
}

void TestStudioRuns::exportsRuns_data() {
  QTest::addColumn<QString>("format");
  QTest::newRow("csv") << "csv";
  QTest::newRow("json") << "json";
  QTest::newRow("md") << "md";
}

void TestStudioRuns::exportsRuns() {
  QFETCH(QString, format);
  RunsPanel panel;
  panel.setDatabase(db_);
  const QString path = dir_->filePath(QStringLiteral("runs.") + format);
  QVERIFY2(panel.exportRuns({base_, fast_}, format, path), qPrintable(panel.message()));
  QVERIFY(!panel.hasError());
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QByteArray bytes = f.readAll();
  if (format == QLatin1String("csv")) {
    QList<QByteArray> lines = bytes.trimmed().split('\n');
    QCOMPARE(lines.value(0).trimmed(), QByteArray("run,step,metric,value"));
    RunStore store(db_.toStdString(), RunStore::Mode::existing);
    int values = 0;  // one CSV row per recorded value
    for (int64_t id : {base_, fast_})
      for (const MetricRow& r : store.metrics(id))
        for (const MetricValue& v : r.values) values += std::isnan(v.value) ? 0 : 1;
    QCOMPARE(lines.size() - 1, values);
    QVERIFY(lines.value(1).startsWith("uid-base,1,"));
  } else if (format == QLatin1String("json")) {
    QJsonParseError error;
    QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QJsonArray runs = doc.object().value(QStringLiteral("runs")).toArray();
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs[1].toObject().value(QStringLiteral("metrics")).toArray().size(), kSteps);
  } else {
    QCOMPARE(bytes.count("\n| #"), 2);  // a table row per run
    QVERIFY(bytes.contains("2.50"));
  }
  // The same bytes as the CLI's export, when the CLI is built alongside.
  const QString cli = test::tokamak_bin();
  if (!cli.isEmpty() && QFileInfo::exists(cli)) {
    const QString cliPath = dir_->filePath(QStringLiteral("cli.") + format);
    QCOMPARE(test::run_tokamak({"runs", "export", QString::number(base_), QString::number(fast_), "--format", format,
                                "--out", cliPath, "--db", db_},
                               {}, 60000)
                 .code,
             0);
    QFile c(cliPath);
    QVERIFY(c.open(QIODevice::ReadOnly));
    QCOMPARE(c.readAll(), bytes);
  }
}

void TestStudioRuns::exportsPlot_data() {
  QTest::addColumn<QString>("suffix");
  QTest::newRow("png") << "png";
  QTest::newRow("pdf") << "pdf";
  QTest::newRow("svg") << "svg";
}

void TestStudioRuns::exportsPlot() {
  QFETCH(QString, suffix);
  RunsPanel panel;
  panel.setDatabase(db_);
  panel.resize(1200, 900);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QVERIFY(panel.compareRuns({base_, fast_}));
  const QSize shown = panel.compareView()->plot()->size();  // the notice shown afterwards resizes it
  const QString path = dir_->filePath(QStringLiteral("plot.") + suffix);
  QVERIFY2(panel.exportPlot(path), qPrintable(panel.message()));
  QFile f(path);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QByteArray bytes = f.readAll();
  QVERIFY(bytes.size() > 1000);
  if (suffix == QLatin1String("png")) {
    QImage image;
    QVERIFY(image.loadFromData(bytes, "PNG"));
    QCOMPARE(image.size(), shown);  // the plot as it is on screen
  } else if (suffix == QLatin1String("pdf")) {
    QVERIFY(bytes.startsWith("%PDF"));
  } else {
    QXmlStreamReader xml(bytes);
    QString root;
    while (!xml.atEnd()) {
      xml.readNext();
      if (xml.isStartElement() && root.isEmpty()) root = xml.name().toString();
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QCOMPARE(root, QStringLiteral("svg"));
    QVERIFY(bytes.contains("<path") || bytes.contains("<polyline"));  // vector curves, not a bitmap
  }
}

void TestStudioRuns::importAddsRuns() {
  const QString exportPath = dir_->filePath(QStringLiteral("server.json"));
  {
    RunsPanel source;
    source.setDatabase(db_);
    QVERIFY(source.exportRuns({base_, fast_}, QStringLiteral("json"), exportPath));
  }
  RunsPanel panel;
  panel.setDatabase(dir_->filePath(QStringLiteral("laptop.db")));
  QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
  QCOMPARE(panel.proxyModel()->rowCount(), 0);
  QVERIFY2(panel.importRuns(exportPath), qPrintable(panel.message()));
  QCOMPARE(panel.proxyModel()->rowCount(), 2);
  QVERIFY(rowOfName(panel, QStringLiteral("all switches")) >= 0);
  QVERIFY(panel.message().contains(QStringLiteral("Imported 2")));
  QVERIFY(panel.importRuns(exportPath));  // again: already there, skipped, not duplicated
  QCOMPARE(panel.proxyModel()->rowCount(), 2);
  QVERIFY(panel.message().contains(QStringLiteral("skipped 2")));
}

void TestStudioRuns::rerunAndResumeEmitConfig() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QSignalSpy rerun(&panel, &RunsPanel::rerunRequested);
  QSignalSpy resume(&panel, &RunsPanel::resumeRequested);
  QVERIFY(panel.rerunWithChanges(base_));
  QCOMPARE(rerun.count(), 1);
  QCOMPARE(rerun.at(0).at(0).toString(), QString::fromLatin1(kBaseConfig));
  QVERIFY(panel.resumeRun(fast_));
  QCOMPARE(resume.count(), 1);
  QCOMPARE(resume.at(0).at(0).toString(), checkpoint_);
  QCOMPARE(resume.at(0).at(1).toString(), QString::fromLatin1(kFastConfig));
  QVERIFY(!panel.resumeRun(base_));  // no checkpoint: an error in the panel, no signal
  QCOMPARE(resume.count(), 1);
  QVERIFY(panel.hasError());
  QVERIFY(panel.message().contains(QStringLiteral("no checkpoint")));
}

// "Export → Model for Hugging Face…": the run's last checkpoint becomes a GPT-2 folder (and "… for llama.cpp and
// Ollama (GGUF)…" one GGUF file),
// tokamak-engine while the panel stays usable; its failures arrive as one line.
void TestStudioRuns::exportsAModelForHuggingFace() {
  const int64_t tiny = addTinyRun("uid-hf");
  RunsPanel panel;
  panel.setDatabase(db_);
  const QString out = dir_->filePath(QStringLiteral("hf"));
  QVERIFY2(panel.exportForHuggingFace(tiny, out), qPrintable(panel.message()));
  QVERIFY(panel.isExporting());
  QVERIFY(!panel.exportForHuggingFace(tiny, out));  // one export at a time
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isExporting(), 120000);
  QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
  QVERIFY2(panel.message().contains(QStringLiteral("Exported run #%1").arg(tiny)), qPrintable(panel.message()));
  const ModelConfig m = hf_weights_config(out.toStdString(), ModelConfig{});  // config.json, as transformers reads it
  QCOMPARE(m.n_layer, int64_t{1});
  QCOMPARE(m.n_embd, int64_t{32});
  QCOMPARE(m.context, int64_t{32});
  QCOMPARE(m.vocab_size, int64_t{50257});
  QVERIFY(QFile::exists(out + QStringLiteral("/model.safetensors")));

  // A file that is not a checkpoint: the engine refuses it and its reason reaches the panel.
  QVERIFY(panel.exportForHuggingFace(fast_, dir_->filePath(QStringLiteral("hf-bad"))));
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isExporting(), 120000);
  QVERIFY(panel.hasError());
  QVERIFY2(panel.message().contains(QStringLiteral("failed")) && panel.message().contains(QStringLiteral("fast.pt")),
           qPrintable(panel.message()));
  // No checkpoint at all: refused before any process starts.
  QVERIFY(!panel.exportForHuggingFace(base_, out));
  QVERIFY(!panel.isExporting());
  QVERIFY(panel.message().contains(QStringLiteral("no checkpoint")));

  // "Model for llama.cpp and Ollama (GGUF)…": one file, GGUF's magic and version 3 at its start.
  const QString gguf = dir_->filePath(QStringLiteral("tiny-q8.gguf"));
  QVERIFY2(panel.exportGguf(tiny, gguf, QStringLiteral("q8_0")), qPrintable(panel.message()));
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isExporting(), 120000);
  QVERIFY2(!panel.hasError() && panel.message().contains(QStringLiteral("llama.cpp")), qPrintable(panel.message()));
  QFile f(gguf);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.read(8), QByteArray("GGUF\x03\x00\x00\x00", 8));
}

// "Evaluate…": a child `tokamak eval` scores the run's last checkpoint, the results are kept as eval/... metrics
// of the run (so the compare view can plot them), and a bad task arrives as one line.
void TestStudioRuns::evaluatesARun() {
  const int64_t tiny = addTinyRun("uid-ev");
  RunsPanel panel;
  panel.setDatabase(db_);
  const QString items = QStringLiteral(TOKAMAK_SOURCE_DIR "/tests/data/hellaswag_tiny.jsonl");
  QVERIFY2(panel.evaluateRun(tiny, QStringLiteral("hellaswag:") + items), qPrintable(panel.message()));
  QVERIFY(panel.isEvaluating());
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isEvaluating(), 120000);
  QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
  QVERIFY2(panel.message().contains(QStringLiteral("acc_norm")) && panel.message().contains(QStringLiteral("n 6")),
           qPrintable(panel.message()));
  std::set<std::string> keys;
  {
    RunStore store(db_.toStdString());
    for (const MetricRow& row : store.metrics(tiny))
      for (const MetricValue& v : row.values) keys.insert(v.key);
  }
  QVERIFY(keys.count("eval/hellaswag/acc") && keys.count("eval/hellaswag/acc_norm"));
  QVERIFY(panel.compareRuns({tiny}));
  QVERIFY2(panel.compareView()->setMetricKey(QStringLiteral("eval/hellaswag/acc")),
           qPrintable(panel.compareView()->metricKeys().join(", ")));
  QCOMPARE(panel.compareView()->plot()->graph(0)->dataCount(), 1);  // one evaluation, at the checkpoint's step

  QVERIFY(panel.evaluateRun(tiny, QStringLiteral("hellaswag:") + dir_->filePath(QStringLiteral("missing.jsonl"))));
  QTRY_VERIFY_WITH_TIMEOUT(!panel.isEvaluating(), 120000);
  QVERIFY(panel.hasError());
  QVERIFY2(panel.message().contains(QStringLiteral("missing.jsonl")), qPrintable(panel.message()));
}

void TestStudioRuns::deleteAsksFirst() {
  RunsPanel panel;
  panel.setDatabase(db_);
  QString asked;
  bool answer = false;
  panel.setConfirmation([&](const QString& q) {
    asked = q;
    return answer;
  });
  QVERIFY(!panel.deleteRuns({base_}));
  QVERIFY(asked.contains(QStringLiteral("baseline")));
  QCOMPARE(panel.proxyModel()->rowCount(), 2);
  answer = true;
  QVERIFY(panel.compareRuns({base_, fast_}));
  QVERIFY(panel.deleteRuns({base_}));
  QCOMPARE(panel.proxyModel()->rowCount(), 1);
  QVERIFY(panel.compareView()->runIds().isEmpty());  // a deleted run leaves the compare view
  RunStore store(db_.toStdString(), RunStore::Mode::existing);
  QCOMPARE(store.run_ids(), std::vector<int64_t>{fast_});
}

void TestStudioRuns::showsErrors_data() {
  QTest::addColumn<QString>("what");
  QTest::addColumn<QString>("expected");
  QTest::newRow("db in a missing folder") << "db-missing-folder"
                                          << "does not exist";
  QTest::newRow("db is not Tokamak's") << "db-text-file"
                                       << "Cannot open the run database";
  QTest::newRow("db is a folder") << "db-folder"
                                  << "is a folder";
  QTest::newRow("import: not JSON") << "import-garbage"
                                    << "Import failed";
  QTest::newRow("import: missing file") << "import-missing"
                                        << "Import failed";
  QTest::newRow("export: unwritable path") << "export-unwritable"
                                           << "Export failed";
  QTest::newRow("plot: unwritable path") << "plot-unwritable"
                                         << "Plot export failed";
  QTest::newRow("plot: unknown format") << "plot-format"
                                        << "Unknown plot format";
}

void TestStudioRuns::showsErrors() {
  QFETCH(QString, what);
  QFETCH(QString, expected);
  RunsPanel panel;
  const QString bad = dir_->filePath(QStringLiteral("bad.txt"));
  QFile f(bad);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(QByteArray("this is not a database, nor JSON {\n").repeated(200));
  f.close();
  bool ok = true;
  if (what.startsWith(QLatin1String("db-"))) {
    const QString path = what == QLatin1String("db-missing-folder") ? dir_->filePath(QStringLiteral("nope/runs.db"))
                         : what == QLatin1String("db-text-file")    ? bad
                                                                    : dir_->path();
    panel.setDatabase(path);
    ok = panel.proxyModel()->rowCount() > 0;
    panel.refresh();  // must not crash or throw with no store
  } else {
    panel.setDatabase(db_);
    QVERIFY(!panel.hasError());
    const QString unwritable = bad + QStringLiteral("/out.");  // below a file: no folder can be made there
    if (what == QLatin1String("import-garbage")) ok = panel.importRuns(bad);
    if (what == QLatin1String("import-missing")) ok = panel.importRuns(dir_->filePath(QStringLiteral("missing.json")));
    if (what == QLatin1String("export-unwritable"))
      ok = panel.exportRuns({base_}, QStringLiteral("csv"), unwritable + "csv");
    if (what.startsWith(QLatin1String("plot-"))) {
      QVERIFY(panel.compareRuns({base_, fast_}));
      ok = panel.exportPlot(what == QLatin1String("plot-format") ? dir_->filePath(QStringLiteral("plot.gif"))
                                                                 : unwritable + "png");
    }
    QCOMPARE(panel.proxyModel()->rowCount(), 2);  // nothing imported, nothing lost
  }
  QVERIFY(!ok);
  QVERIFY(panel.hasError());
  QVERIFY2(panel.message().contains(expected), qPrintable(panel.message()));
}

// Docs screenshot: TOKAMAK_SCREENSHOT_DB=<db of real runs> TOKAMAK_SCREENSHOT_OUT=<png>, under Xvfb.
void TestStudioRuns::screenshot() {
  const QString db = qEnvironmentVariable("TOKAMAK_SCREENSHOT_DB");
  const QString out = qEnvironmentVariable("TOKAMAK_SCREENSHOT_OUT");
  if (db.isEmpty() || out.isEmpty())
    QSKIP("set TOKAMAK_SCREENSHOT_DB and TOKAMAK_SCREENSHOT_OUT to grab the compare view");
  RunsPanel panel;
  panel.setDatabase(db);
  QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
  panel.resize(1500, 950);
  panel.show();
  QVERIFY(QTest::qWaitForWindowExposed(&panel));
  QList<qint64> ids;
  for (int r = 0; r < panel.proxyModel()->rowCount(); ++r)
    ids << panel.proxyModel()->index(r, 0).data(RunsTableModel::IdRole).toLongLong();
  std::sort(ids.begin(), ids.end());
  QVERIFY(ids.size() >= 2);
  panel.selectRuns(ids);
  QVERIFY(panel.compareRuns(panel.selectedRunIds()));
  // By default tok/s: a ladder's switches change speed, not what is learned (their loss curves coincide).
  // TOKAMAK_SCREENSHOT_METRIC and TOKAMAK_SCREENSHOT_GROUP pick another metric and a grouping (docs' band).
  const QString metric = qEnvironmentVariable("TOKAMAK_SCREENSHOT_METRIC", QStringLiteral("tok_s"));
  QVERIFY2(panel.compareView()->setMetricKey(metric), qPrintable(metric));
  const QString group = qEnvironmentVariable("TOKAMAK_SCREENSHOT_GROUP", QStringLiteral("none"));
  QVERIFY2(panel.compareView()->setGrouping(group), qPrintable(panel.compareView()->groupError()));
  if (group == QLatin1String("none")) QCOMPARE(panel.compareView()->plot()->graphCount(), int(ids.size()));
  else QVERIFY(!panel.compareView()->scoreboard().groups.empty());
  // TOKAMAK_SCREENSHOT_WATERFALL=time shows the waterfall by time to target (a speedrun ladder's runs).
  if (qEnvironmentVariable("TOKAMAK_SCREENSHOT_WATERFALL") == QLatin1String("time")) {
    auto* charts = panel.compareView()->findChild<QTabWidget*>(QStringLiteral("compareCharts"));
    QVERIFY(charts);
    charts->setCurrentWidget(panel.compareView()->waterfall());
    panel.compareView()->waterfallBy()->setCurrentIndex(1);
    // Half the height for the scoreboard and the waterfall, whose rung names are slanted under the bars.
    auto* split = qobject_cast<QSplitter*>(charts->parentWidget()->parentWidget());
    QVERIFY(split && split->orientation() == Qt::Vertical);
    split->setSizes({330, 330});
  }
  // TOKAMAK_SCREENSHOT_WATERFALL=light shows the Speed of light tab instead (runs of `bench --kernels`).
  if (qEnvironmentVariable("TOKAMAK_SCREENSHOT_WATERFALL") == QLatin1String("light")) {
    auto* charts = panel.compareView()->findChild<QTabWidget*>(QStringLiteral("compareCharts"));
    QVERIFY(charts);
    QVERIFY(panel.compareView()->speedOfLight()->profiledRuns() > 0);
    charts->setCurrentWidget(panel.compareView()->speedOfLight());
    auto* split = qobject_cast<QSplitter*>(charts->parentWidget()->parentWidget());
    QVERIFY(split && split->orientation() == Qt::Vertical);
    split->setSizes({300, 360});
  }
  panel.tableView()->resizeColumnsToContents();
  if (group != QLatin1String("none")) panel.compareView()->scoreTable()->scrollToBottom();  // group rows come last
  QTest::qWait(300);
  QVERIFY(panel.grab().save(out));
  QVERIFY(QImage(out).width() >= 1500);
}

QTEST_MAIN(TestStudioRuns)
#include "test_studio_runs.moc"
