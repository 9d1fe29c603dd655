// Inside the run, in the studio at 1366×768: a run started from the window measures its layers, the live page draws
// them as a heatmap of layers × steps (picked like any metric), and a click on a cell says the value the store holds
// for that layer and step; two runs side by side in Compare's Layers tab; the runs out to TensorBoard from Export.
#include <QtTest>

#include <QComboBox>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTemporaryDir>

#include "engine/base/config/config.h"
#include "engine/base/run/layer_metrics.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/history/compare_view.h"
#include "ui/history/layer_compare.h"
#include "ui/history/runs_panel.h"
#include "ui/live/run_controller.h"
#include "ui/plots/layer_heatmap.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/qcp.h"
#include "ui/setup/setup_panel.h"
#include "ui/window/main_window.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

std::vector<std::string> layeredRun(const std::string& data, const std::string& name, const std::string& lr) {
  return test::tiny_run_overrides({"model.n_layer=2", "train.batch_size=2", "train.steps=20", "threads=1",
                                   "train.log_every=5", "eval.every=0", "sample.every=-1", "schedule.warmup_steps=2",
                                   "speed.precision=fp32", "optimizer.lr=" + lr, "data.path=" + data, "name=" + name});
}

// The widget's rectangle in its window: whole, and inside the 1366×768 the window is given.
bool insideWindow(QWidget* w, QWidget* window) {
  const QRect r(w->mapTo(window, QPoint(0, 0)), w->size());
  return w->isVisible() && QRect(QPoint(0, 0), window->size()).contains(r);
}

const std::vector<std::string> kGroups = {"emb",     "h0.attn", "h0.mlp",  "h0.norm",
                                          "h1.attn", "h1.mlp",  "h1.norm", "head"};

}  // namespace

class TestStudioLayers : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::string data_;

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY2(env_->ok(), "assets missing: run scripts/setup.sh");
    data_ = env_->corpus_excerpt(30000);
  }

  void liveHeatmapSaysWhatTheStoreHolds() {
    MainWindow w;
    w.setCloseQuestion([] { return true; });
    w.resize(1366, 768);
    w.show();
    Config c;
    apply_overrides(c, layeredRun(data_, "layers-live", "0.001"));
    w.setupPanel()->setConfig(c);
    w.startAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->isActive(), 120000);
    QCOMPARE(QString::fromStdString(w.runController()->lastEnd().status), QString("finished"));
    LivePlots* plots = w.livePlots();
    QComboBox* picker = plots->metricPicker();
    for (const LayerStat& s : layer_stats()) QVERIFY2(picker->findData(QString("layers:") + s.id) >= 0, s.id);
    QCOMPARE(picker->findText("layers.g_rms.h0.attn"), -1);  // the layers' keys are the heatmap's, not the picker's
    picker->setCurrentIndex(picker->findData("layers:update_ratio"));
    QVERIFY(plots->heatmapShown());
    LayerHeatmap* map = plots->layerHeatmap();
    QCoreApplication::processEvents();
    QVERIFY2(insideWindow(map->plot(), &w) && map->plot()->height() >= 100,
             qPrintable(QString("%1×%2").arg(map->plot()->width()).arg(map->plot()->height())));
    QCOMPARE(map->groups(), kGroups);
    QCOMPARE(map->steps(), (std::vector<int64_t>{1, 5, 10, 15, 20}));
    // A click on h1.mlp's cell at step 10 says the value the store keeps for it.
    map->plot()->replot();
    const QPoint cell(int(map->plot()->xAxis->coordToPixel(10)), int(map->plot()->yAxis->coordToPixel(5)));
    QTest::mouseClick(map->plot(), Qt::LeftButton, {}, cell);
    RunStore store(default_db_path(), RunStore::Mode::existing);
    const int64_t id = store.run_ids().back();
    double stored = std::nan("");
    for (const MetricRow& r : store.metrics(id))
      if (r.step == 10) stored = r[layer_metric("update_ratio", "h1.mlp")];
    QVERIFY(stored > 0);
    QCOMPARE(map->readout(), QString("h1.mlp · step 10 · update / weight %1").arg(stored, 0, 'g', 4));
    // The plot picker's other entries still draw curves.
    picker->setCurrentIndex(picker->findData("tok_s"));
    QVERIFY(!plots->heatmapShown());
  }

  void compareShowsTwoRunsSideBySide() {
    // A second run from the command line into the same store, its learning rate ten times higher.
    const auto cli = test::run_tokamak(QStringList{"train"} + test::set_args(layeredRun(data_, "layers-hot", "0.01")));
    QVERIFY2(cli.code == 0, qPrintable(cli.err_text()));
    MainWindow w;
    w.resize(1366, 768);
    w.show();
    w.showRunsPage();
    RunStore store(default_db_path(), RunStore::Mode::existing);
    const std::vector<int64_t> ids = store.run_ids();
    QVERIFY(ids.size() >= 2);
    const QList<qint64> two{ids[ids.size() - 2], ids.back()};
    QVERIFY(w.runsPanel()->compareRuns(two));
    LayerCompare* layers = w.runsPanel()->compareView()->layerCompare();
    auto* tabs = w.runsPanel()->compareView()->findChild<QTabWidget*>("compareTabs");
    tabs->setCurrentWidget(layers);
    QCoreApplication::processEvents();
    QVERIFY(layers->note().isEmpty());
    for (int side = 0; side < 2; ++side) {
      LayerHeatmap* map = layers->heatmap(side);
      QVERIFY(map->hasData());
      QCOMPARE(map->groups(), kGroups);
      QVERIFY2(insideWindow(map->plot(), &w) && map->plot()->width() >= 120,
               qPrintable(QString("side %1: %2×%3").arg(side).arg(map->plot()->width()).arg(map->plot()->height())));
    }
    // The tab is a strip of the runs page at 1366×768; its ⤢ button shows the same two runs in a window of their own.
    LayerCompare* large = layers->openWindow();
    QVERIFY(QTest::qWaitForWindowExposed(large->window()));
    QVERIFY(large->window()->width() <= 1366 && large->window()->height() <= 768);
    for (int side = 0; side < 2; ++side) {
      LayerHeatmap* map = large->heatmap(side);
      QCOMPARE(map->groups(), kGroups);
      QCOMPARE(large->runBox(side)->currentText(), layers->runBox(side)->currentText());
      QVERIFY2(map->plot()->width() >= 300 && map->plot()->height() >= 300,
               qPrintable(QString("side %1: %2×%3").arg(side).arg(map->plot()->width()).arg(map->plot()->height())));
    }
    large->window()->close();
    QVERIFY(layers->runBox(1)->currentText().contains("layers-hot"));
    // One colour scale for both: the same colour is the same value on either side, spanning both runs' values.
    const auto rangeOf = [&](int side) {
      return qobject_cast<QCPColorMap*>(layers->heatmap(side)->plot()->plottable(0))->dataRange();
    };
    QCOMPARE(rangeOf(0).lower, rangeOf(1).lower);
    QCOMPARE(rangeOf(0).upper, rangeOf(1).upper);
    QCOMPARE(rangeOf(0).upper,
             std::max(layers->heatmap(0)->valueRange().second, layers->heatmap(1)->valueRange().second));
    layers->statPicker()->setCurrentIndex(layers->statPicker()->findData("attn_entropy"));
    for (int side = 0; side < 2; ++side) {
      QCOMPARE(layers->heatmap(side)->stat(), std::string("attn_entropy"));
      QCOMPARE(layers->heatmap(side)->groups(), (std::vector<std::string>{"h0", "h1"}));
    }
    // The compare plot's picker offers no layer keys: they are this tab's.
    for (const QString& key : w.runsPanel()->compareView()->metricKeys())
      QVERIFY2(!key.startsWith("layers."), qPrintable(key));
  }

  void exportsForTensorBoardFromThePanel() {
    MainWindow w;
    w.showRunsPage();
    RunStore store(default_db_path(), RunStore::Mode::existing);
    const qint64 id = store.run_ids().back();
    QTemporaryDir logs;
    QVERIFY(w.runsPanel()->exportTensorboard({id}, logs.path()));
    QVERIFY2(w.runsPanel()->message().contains("tensorboard --logdir"), qPrintable(w.runsPanel()->message()));
    const QString folder =
        logs.filePath(QString("layers-hot-%1").arg(QString::fromStdString(store.run(id).uid.substr(0, 8))));
    QCOMPARE(QDir(folder).entryList(QDir::Files).size(), 1);
    QVERIFY(!w.runsPanel()->exportTensorboard({id}, logs.path()));  // an earlier export: only when asked
    QVERIFY(w.runsPanel()->message().contains("--force"));
    QVERIFY(w.runsPanel()->exportTensorboard({id}, logs.path(), /*replace=*/true));
  }

  // docs/INSIDE.md's picture (scripts/screenshot-layers.sh): the runs of TOKAMAK_SCREENSHOT_DB side by side in
  // Compare's Layers tab, statistic TOKAMAK_SCREENSHOT_STAT, grabbed to TOKAMAK_SCREENSHOT_OUT.
  void screenshot() {
    const QString db = qEnvironmentVariable("TOKAMAK_SCREENSHOT_DB"),
                  out = qEnvironmentVariable("TOKAMAK_SCREENSHOT_OUT");
    if (db.isEmpty() || out.isEmpty())
      QSKIP("set TOKAMAK_SCREENSHOT_DB and TOKAMAK_SCREENSHOT_OUT to grab the Layers tab");
    RunsPanel panel;
    panel.setDatabase(db);
    QVERIFY2(!panel.hasError(), qPrintable(panel.message()));
    panel.resize(1500, 950);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    RunStore store(db.toStdString(), RunStore::Mode::existing);
    const std::vector<int64_t> ids = store.run_ids();
    QVERIFY(ids.size() >= 2);
    QVERIFY(panel.compareRuns({ids[0], ids[1]}));
    LayerCompare* layers = panel.compareView()->layerCompare();
    auto* tabs = panel.compareView()->findChild<QTabWidget*>("compareTabs");
    tabs->setCurrentWidget(layers);
    auto* split = qobject_cast<QSplitter*>(tabs->parentWidget());
    QVERIFY(split);
    split->setSizes({300, 1200});  // the tab, not the curves: two maps side by side
    const QString stat = qEnvironmentVariable("TOKAMAK_SCREENSHOT_STAT", "g_rms");
    layers->statPicker()->setCurrentIndex(layers->statPicker()->findData(stat));
    QTest::qWait(300);
    QVERIFY(panel.grab().save(out));
  }
};

QTEST_MAIN(TestStudioLayers)
#include "test_studio_layers.moc"
