// The live plots under load: the event loop keeps answering within 50 ms while 100,000 steps stream through
// the real bridge → controller → plots path into the real window; and the plot controls (X axis, smoothing
// over a visible raw curve, log Y, hover read-out) do what they say.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <QElapsedTimer>
#include <atomic>
#include <thread>

#include "engine/config/config.h"
#include "engine/model/memory_estimate.h"
#include "ui/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/plots/phase_bars.h"
#include "ui/setup/key_bindings.h"
#include "ui/setup/model_box.h"
#include "ui/run/event_bridge.h"
#include "ui/run/run_controller.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

StepEvent fakeStep(int64_t i) {
  StepEvent e;
  e.step = i, e.tokens = i * 64, e.wall_s = i * 0.01;
  e.metrics.add("loss", 4.0 + std::sin(i * 0.01) + 0.3 * ((i * 7919) % 13) / 13.0);
  e.metrics.add("lr", 1e-3), e.metrics.add("grad_norm", 1.0), e.metrics.add("tok_s", 5000 + (i % 100));
  e.metrics.add("mfu", 0.4);
  e.metrics.add_count("mem_allocated", 100000000), e.metrics.add_count("mem_reserved", 120000000);
  e.metrics.add_count("mem_peak", 110000000);
  return e;
}

EvalEvent fakeEval(int64_t step, double wall, double valLoss) {
  EvalEvent e{step, step * 64, wall, {}};
  e.metrics.add("val_loss", valLoss);
  return e;
}

// Largest gap between ticks of a 5 ms timer: how long the event loop was busy at a stretch.
class LatencyProbe : public QObject {
 public:
  LatencyProbe() {
    timer_.setInterval(5);
    connect(&timer_, &QTimer::timeout, this, [this] { worst_ = std::max(worst_, clock_.restart() - 5); });
    clock_.start();
    timer_.start();
  }
  qint64 worst() const { return worst_; }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 worst_ = 0;
};

}  // namespace

class TestStudioPlots : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void staysResponsiveWith100kPoints();
  void controlsRebuildTheCurves();
  void pickerOffersEveryMetric();
  void stepProfileBar();
  void measuredMemoryBesideTheEstimate();
};

void TestStudioPlots::staysResponsiveWith100kPoints() {
  MainWindow w;
  w.resize(1500, 950);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  EventBridge* bridge = w.runController()->bridge();
  constexpr int64_t kPoints = 100000;
  std::atomic<bool> done{false};
  // A trainer far faster than any real one: 100k steps in about two seconds, from another thread.
  std::thread producer([&] {
    for (int64_t i = 1; i <= kPoints; ++i) {
      bridge->on_step(fakeStep(i));
      if (i % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  LatencyProbe probe;
  QTRY_VERIFY_WITH_TIMEOUT(done.load() && w.livePlots()->trainPoints() == kPoints, 60000);
  producer.join();
  // With all 100k points on every plot, keep redrawing (a few more steps per batch) for a second.
  for (int64_t i = kPoints + 1; i <= kPoints + 50; ++i) {
    bridge->on_step(fakeStep(i));
    QTest::qWait(20);
  }
  QTRY_COMPARE(w.livePlots()->trainPoints(), int(kPoints + 50));
  qInfo("worst event-loop stall while plotting: %lld ms", probe.worst());
  QVERIFY2(probe.worst() < 50, qPrintable(QString("event loop stalled for %1 ms").arg(probe.worst())));
}

void TestStudioPlots::controlsRebuildTheCurves() {
  LivePlots plots;
  plots.resize(900, 600);
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 200; ++i) steps.push_back(fakeStep(i));
  plots.appendSteps(steps);
  plots.appendEvals({fakeEval(100, 1.0, 4.5), fakeEval(200, 2.0, 4.2)});
  plots.flush();
  MetricPlot* loss = plots.lossPlot();
  QCOMPARE(plots.trainPoints(), 200);
  QCOMPARE(plots.valPoints(), 2);
  // Graphs 0/1 are train raw/smoothed: both hold every point, and the raw one is drawn lighter.
  QCOMPARE(loss->graph(0)->dataCount(), 200);
  QCOMPARE(loss->graph(1)->dataCount(), 200);
  QVERIFY(loss->graph(1)->visible());
  QVERIFY(loss->graph(0)->pen().color().alpha() < loss->graph(1)->pen().color().alpha());
  QVERIFY(loss->graph(1)->data()->at(199)->value != loss->graph(0)->data()->at(199)->value);  // smoothed

  auto* xAxis = plots.findChild<QComboBox*>("xAxis");
  xAxis->setCurrentIndex(1);  // tokens
  QCOMPARE(loss->graph(0)->data()->at(199)->key, 200.0 * 64);
  QCOMPARE(loss->xAxis->label(), QString("tokens"));
  xAxis->setCurrentIndex(2);  // wall time
  QCOMPARE(loss->graph(0)->data()->at(199)->key, 2.0);

  plots.findChild<QSlider*>("smoothing")->setValue(0);  // off: the raw curve alone, at full strength
  QVERIFY(!loss->graph(1)->visible());
  QCOMPARE(loss->graph(0)->pen().color().alpha(), 255);
  plots.findChild<QCheckBox*>("logY")->setChecked(true);
  QCOMPARE(loss->yAxis->scaleType(), QCPAxis::stLogarithmic);
  // Hover read-out: the nearest point of each series at that x.
  const QString readout = loss->readoutAt(2.0);
  QVERIFY2(readout.contains("train") && readout.contains("val 4.2"), qPrintable(readout));
  plots.clear();
  QCOMPARE(plots.trainPoints(), 0);
  QCOMPARE(loss->graph(0)->dataCount(), 0);
}

// A metric no plot was written for shows up in the picker as soon as a step reports it, is what the last
// plot shows by default, and a metric picked later is drawn from the run's first step.
void TestStudioPlots::pickerOffersEveryMetric() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 50; ++i) {
    steps.push_back(fakeStep(i));
    if (i > 10) steps.back().metrics.add("brand_new", 0.5 * i);  // appears from step 11 on
  }
  plots.appendSteps(steps);
  plots.appendEvals({fakeEval(50, 0.5, 4.0)});
  plots.flush();
  QComboBox* picker = plots.metricPicker();
  QStringList keys;
  for (int i = 0; i < picker->count(); ++i) keys << picker->itemText(i);
  for (const char* key : {"loss", "lr", "grad_norm", "tok_s", "mfu", "mem_peak", "brand_new", "val_loss"})
    QVERIFY2(keys.contains(key), qPrintable(keys.join(", ")));
  MetricPlot* picked = plots.pickedPlot();
  QCOMPARE(picker->currentText(), QString("brand_new"));  // the only key without a plot of its own
  QCOMPARE(picked->title(), QString("brand_new"));
  QCOMPARE(picked->pointCount(0), 40);
  QCOMPARE(picked->graph(0)->data()->at(39)->value, 25.0);
  picker->setCurrentText("lr");  // a default metric may be picked too: its whole history is drawn
  QCOMPARE(picked->pointCount(0), 50);
  QCOMPARE(picked->graph(0)->dataCount(), 50);
  QCOMPARE(picked->title(), QString("lr"));
  plots.clear();
  QCOMPARE(picker->count(), 0);
  QCOMPARE(picked->pointCount(0), 0);
}

// The live view's step profile: one stacked bar, each phase the mean of the reports after the first (the
// warm-up), stacked in step order; a phase the run does not report (all-reduce of one process) is not drawn;
// the phases are not the picked plot's default; clear() empties the bar.
void TestStudioPlots::stepProfileBar() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 4; ++i) {
    steps.push_back(fakeStep(i));
    steps.back().metrics.add("phase_data_ms", 0.5);
    steps.back().metrics.add("phase_forward_ms", i == 1 ? 500.0 : 10.0 * i);  // 20, 30, 40 after the first
    steps.back().metrics.add("phase_backward_ms", i == 1 ? 900.0 : 60.0);
    steps.back().metrics.add("phase_optimizer_ms", 5);
    steps.back().metrics.add("phase_other_ms", 1);
  }
  plots.appendSteps(steps);
  plots.flush();
  PhaseBars* bars = plots.phaseBars();
  QCOMPARE(bars->runCount(), 1);
  QCOMPARE(bars->segment(0, Phase::kForward), 30.0);
  QCOMPARE(bars->segment(0, Phase::kBackward), 60.0);
  QCOMPARE(bars->segmentBase(0, Phase::kBackward), 0.5 + 30.0);  // on top of data and forward
  QCOMPARE(bars->segmentBase(0, Phase::kOther), 0.5 + 30.0 + 60.0 + 5.0);
  QVERIFY(!bars->bars(Phase::kAllreduce)->visible());
  QVERIFY(bars->bars(Phase::kForward)->visible());
  QVERIFY2(!plots.metricPicker()->currentText().startsWith("phase_"), qPrintable(plots.metricPicker()->currentText()));
  plots.clear();
  QCOMPARE(bars->runCount(), 0);
}

// The measured peak is shown beside the estimate with the difference named: how much over or under, in bytes
// and per cent of the estimate, and on a CPU over the estimate, what the resident set holds besides tensors.
void TestStudioPlots::measuredMemoryBesideTheEstimate() {
  KeyBindings keys;
  ModelBox box(&keys);
  Config c;
  box.showEstimate(c);
  const qint64 estimate = static_cast<qint64>(estimate_memory(c).total());
  QVERIFY(estimate > 0);
  auto* measured = box.findChild<QLabel*>("measuredPeak");
  QVERIFY(measured);
  box.showMeasuredPeak(estimate * 3 / 2, "cpu");
  QVERIFY2(measured->text().contains(formatBytes(estimate / 2) + " over the estimate (+50%)"),
           qPrintable(measured->text()));
  QVERIFY2(measured->text().contains("LibTorch"), qPrintable(measured->text()));
  box.showMeasuredPeak(estimate * 3 / 4, "cuda:0");
  QVERIFY2(measured->text().contains(formatBytes(estimate - estimate * 3 / 4) + " under the estimate (-25%)"),
           qPrintable(measured->text()));
  QVERIFY(!measured->isHidden());
  box.showMeasuredPeak(0, "cpu");
  QVERIFY(measured->isHidden());
}

QTEST_MAIN(TestStudioPlots)
#include "test_studio_plots.moc"
