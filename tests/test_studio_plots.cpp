// The live plots under load: 100,000 steps streamed through the real bridge → controller → plots path into
// the real window are drawn in batched, decimated redraws; and the plot controls (X axis, smoothing
// over a visible raw curve, log Y, hover read-out) do what they say.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QSlider>
#include <atomic>
#include <thread>

#include "engine/base/config/config.h"
#include "engine/base/machine/precision_here.h"
#include "engine/base/plan/memory_estimate.h"
#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/plots/phase_bars.h"
#include "ui/common/qt_helpers.h"
#include "ui/setup/key_bindings.h"
#include "ui/setup/model_box.h"
#include "ui/live/event_bridge.h"
#include "ui/live/run_controller.h"
#include "ui/status/run_status.h"
#include "tests/support/test_support.h"

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

// The points a graph hands to the painter at its current size: QCPGraph::getLines (protected), reached
// through a pointer to member named in a derived class, which the language allows.
struct DrawnPoints : QCPGraph {
  static int of(const QCPGraph* g) {
    QVector<QPointF> lines;
    (g->*(&DrawnPoints::getLines))(&lines, QCPDataRange(0, g->dataCount()));
    return static_cast<int>(lines.size());
  }
};

}  // namespace

class TestStudioPlots : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void redrawsAreCoalescedAndDecimatedWith100kPoints();
  void controlsRebuildTheCurves();
  void pickerOffersEveryMetric();
  void stepProfileBar();
  void measuredMemoryBesideTheEstimate();
  void seventhPlotOpensOnThePhases();
  void legendsBesideTheCurves();
  void ratesReadFromZero();
  void aConstantSeriesIsDrawnAtItsValue();
  void noEtaAfterTheRunEnds();
  void fp16OverflowsAreMarked();
};

// 100,000 steps through the real bridge → controller → plots path into the real window, told in counts,
// never in milliseconds (how long a redraw takes is experiments/bench/plot_latency.sh's job): the steps reach
// the plots in batches (frames), each plot redraws at most once per frame, and what a plot paints is bounded
// by its width in pixels, not by the points it holds (QCustomPlot's adaptive sampling).
void TestStudioPlots::redrawsAreCoalescedAndDecimatedWith100kPoints() {
  MainWindow w;
  w.resize(1500, 950);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  QCoreApplication::processEvents();  // the first layout's replots are not the run's
  int frames = 0;
  connect(w.runController(), &RunController::batchArrived, this, [&frames] { ++frames; });
  const QList<MetricPlot*> plots = w.livePlots()->plots();
  std::vector<int> replots(plots.size(), 0);
  for (int i = 0; i < plots.size(); ++i)
    connect(plots[i], &QCustomPlot::afterReplot, this, [&replots, i] { ++replots[i]; });
  EventBridge* bridge = w.runController()->bridge();
  constexpr int64_t kPoints = 100000;
  std::atomic<bool> done{false};
  // A trainer far faster than any real one, from another thread, in bursts of 1,000 steps.
  std::thread producer([&] {
    for (int64_t i = 1; i <= kPoints; ++i) {
      bridge->on_step(fakeStep(i));
      if (i % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  QTRY_VERIFY_WITH_TIMEOUT(done.load() && w.livePlots()->trainPoints() == kPoints, 300000);
  producer.join();
  // With all 100k points on every plot, a few more steps one at a time: each is a frame of its own.
  for (int64_t i = kPoints + 1; i <= kPoints + 50; ++i) {
    bridge->on_step(fakeStep(i));
    QTest::qWait(20);
  }
  QTRY_COMPARE_WITH_TIMEOUT(w.livePlots()->trainPoints(), int(kPoints + 50), test::kPatienceMs);
  QCoreApplication::processEvents();  // the last frame's queued replots
  qInfo("%lld steps arrived in %d frames", static_cast<long long>(kPoints + 50), frames);
  // Batched: far fewer frames than steps (a frame per step would be 100,050).
  QVERIFY2(frames >= 1 && frames <= kPoints / 20, qPrintable(QString("%1 frames").arg(frames)));
  constexpr int kSlack = 5;  // a replot not caused by data: the picked plot's title, an axis that grew
  for (int i = 0; i < plots.size(); ++i) {
    MetricPlot* p = plots[i];
    QVERIFY2(replots[i] <= frames + kSlack,
             qPrintable(QString("%1: %2 replots for %3 frames").arg(p->title()).arg(replots[i]).arg(frames)));
    const int width = p->axisRect()->width();
    QVERIFY(width > 0);
    for (int g = 0; g < p->graphCount(); ++g) {
      const QCPGraph* graph = p->graph(g);
      if (graph->dataCount() < kPoints) continue;
      QVERIFY(graph->adaptiveSampling());
      const int drawn = DrawnPoints::of(graph);
      QVERIFY2(drawn > 0 && drawn <= 4 * width + 16, qPrintable(QString("%1/%2: %3 of %4 points drawn on %5 px")
                                                                    .arg(p->title())
                                                                    .arg(g)
                                                                    .arg(drawn)
                                                                    .arg(graph->dataCount())
                                                                    .arg(width)));
    }
  }
}

// fp16: the reports whose count of steps the loss scale skipped went up get a mark on the loss plot (shown from the
// first), and the scale is a metric the picker offers.
void TestStudioPlots::fp16OverflowsAreMarked() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  const int skipped[] = {3, 3, 4, 4, 4, 6};  // went up at the 1st, 3rd and 6th reports
  for (int i = 0; i < 6; ++i) {
    StepEvent e = fakeStep(10 * (i + 1));
    e.metrics.add("loss_scale", 65536.0 / (1 << skipped[i]));
    e.metrics.add_count("scale_skipped_steps", skipped[i]);
    steps.push_back(e);
  }
  QCOMPARE(plots.scaleSkipMarks(), 0);
  plots.appendSteps(steps);
  plots.flush();
  QCOMPARE(plots.scaleSkipMarks(), 3);
  QVERIFY(plots.metricPicker()->findText("loss_scale") >= 0);
  plots.clear();
  QCOMPARE(plots.scaleSkipMarks(), 0);
  LivePlots bf16;  // a run without the metric: no marks, no legend entry
  bf16.appendSteps({fakeStep(1), fakeStep(2)});
  QCOMPARE(bf16.scaleSkipMarks(), 0);
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
  const qint64 estimate = static_cast<qint64>(estimate_memory(c, precision_here(c.speed.precision, c.device)).total());
  QVERIFY(estimate > 0);
  auto* measured = box.findChild<QLabel*>("measuredPeak");
  QVERIFY(measured);
  box.showMeasuredPeak(estimate * 3 / 2, "cpu");
  QVERIFY2(measured->text().contains(data_size(double(estimate / 2)) + " over the estimate (+50%)"),
           qPrintable(measured->text()));
  QVERIFY2(measured->text().contains("LibTorch"), qPrintable(measured->text()));
  box.showMeasuredPeak(estimate * 3 / 4, "cuda:0");
  QVERIFY2(measured->text().contains(data_size(double(estimate - estimate * 3 / 4)) + " under the estimate (-25%)"),
           qPrintable(measured->text()));
  QVERIFY(!measured->isHidden());
  box.showMeasuredPeak(0, "cpu");
  QVERIFY(measured->isHidden());
}

namespace {

// A report as the journal hands it over (the journal codec, engine/base/run/journal_events.cpp, reads its keys in
// alphabetical order): the phases, then skipped_steps before step_ms.
StepEvent profiledStep(int64_t i) {
  StepEvent e = fakeStep(i);
  e.metrics.add("phase_backward_ms", 60), e.metrics.add("phase_data_ms", 0.5);
  e.metrics.add("phase_forward_ms", 30), e.metrics.add("phase_optimizer_ms", 5), e.metrics.add("phase_other_ms", 1);
  e.metrics.add_count("skipped_steps", 0);
  e.metrics.add("step_ms", 97);
  return e;
}

}  // namespace

// The seventh plot opens on something to read (it once opened on skipped_steps, a counter that stays 0):
// each phase's ms per step over time when the run reports phases, else the first key of its own but flat
// counters; a key the user picks stays picked when phases arrive later.
void TestStudioPlots::seventhPlotOpensOnThePhases() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 20; ++i) steps.push_back(profiledStep(i));
  plots.appendSteps(steps);
  plots.flush();
  MetricPlot* picked = plots.pickedPlot();
  QCOMPARE(plots.metricPicker()->currentData().toString(), QString("phases"));
  QCOMPARE(picked->title(), QString("Step phases"));
  QCOMPARE(picked->pointCount(0), 0);           // the one-key series is not drawn
  QCOMPARE(picked->shownPointCount(), 5 * 20);  // five phases (no all-reduce in one process), every report
  QVERIFY(picked->legend->visible());
  int entries = 0;  // legend->itemCount() counts a grid's empty cells too
  for (int g = 0; g < picked->graphCount(); ++g) entries += picked->legend->hasItemWithPlottable(picked->graph(g));
  QCOMPARE(entries, 5);

  LivePlots unprofiled;
  steps.clear();
  for (int64_t i = 1; i <= 20; ++i) {
    steps.push_back(fakeStep(i));
    steps.back().metrics.add_count("skipped_steps", 0);
    steps.back().metrics.add("step_ms", 97);
  }
  unprofiled.appendSteps(steps);
  unprofiled.flush();
  QCOMPARE(unprofiled.metricPicker()->currentText(), QString("step_ms"));
  QCOMPARE(unprofiled.pickedPlot()->pointCount(0), 20);
  QVERIFY(!unprofiled.pickedPlot()->legend->visible());  // one curve needs no legend

  // The user's pick is kept when phases are first reported after it.
  const int lr = unprofiled.metricPicker()->findText("lr");
  unprofiled.metricPicker()->setCurrentIndex(lr);
  Q_EMIT unprofiled.metricPicker()->activated(lr);
  unprofiled.appendSteps({profiledStep(21)});
  unprofiled.flush();
  QCOMPARE(unprofiled.metricPicker()->currentText(), QString("lr"));
  QCOMPARE(unprofiled.pickedPlot()->pointCount(0), 21);
}

// Legends stand beside the curves, never on them: in the first window at 1366×768, every plot's
// legend lies wholly in its plot and outside the rectangle its data is drawn in.
void TestStudioPlots::legendsBesideTheCurves() {
  MainWindow w;
  w.fitTo(QRect(0, 0, 1366, 768));
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 200; ++i) steps.push_back(profiledStep(i));
  w.livePlots()->appendSteps(steps);
  w.livePlots()->appendEvals({fakeEval(100, 1.0, 4.5), fakeEval(200, 2.0, 4.2)});
  w.livePlots()->flush();
  QList<QCustomPlot*> all;
  for (MetricPlot* p : w.livePlots()->plots()) all << p;
  all << w.livePlots()->phaseBars();
  int legends = 0;
  for (QCustomPlot* p : all) {
    p->replot();  // lays the plot out at its size now
    if (!p->legend->visible()) continue;
    ++legends;
    const QRect legend = p->legend->outerRect(), data = p->axisRect()->rect();
    const QString where = QString("%1: legend %2,%3 %4×%5, data %6,%7 %8×%9, plot %10×%11")
                              .arg(p->objectName())
                              .arg(legend.x())
                              .arg(legend.y())
                              .arg(legend.width())
                              .arg(legend.height())
                              .arg(data.x())
                              .arg(data.y())
                              .arg(data.width())
                              .arg(data.height())
                              .arg(p->width())
                              .arg(p->height());
    QVERIFY2(!legend.intersects(data), qPrintable(where));
    QVERIFY2(p->rect().contains(legend), qPrintable(where));
  }
  QCOMPARE(legends, 4);  // loss (train, val), memory (allocated, reserved, peak), the phases twice
}

// Rates and sizes are read against zero (a steady 5,000 tok/s once filled the plot's height with a
// ±0.5 tok/s wobble): throughput, MFU and memory start at 0; a loss keeps its own range.
void TestStudioPlots::ratesReadFromZero() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 100; ++i) {
    StepEvent e;
    e.step = i, e.tokens = i * 64, e.wall_s = i * 0.1;
    e.metrics.add("loss", 4.0 + 0.001 * (i % 2));
    e.metrics.add("tok_s", 5000 + (i % 2 ? 0.5 : -0.5));
    e.metrics.add("mfu", 0.4 + 0.0001 * (i % 2));
    steps.push_back(e);
  }
  plots.appendSteps(steps);
  plots.flush();
  for (MetricPlot* p : plots.plots()) {
    if (p->title() != "Throughput" && p->title() != "MFU") continue;
    QCOMPARE(p->yAxis->range().lower, 0.0);
    QVERIFY2(p->yAxis->range().upper >= p->graph(0)->data()->at(0)->value, qPrintable(p->title()));
  }
  QVERIFY(plots.lossPlot()->yAxis->range().lower > 3.9);  // a loss is read by its changes
  // Still from zero after a zoom is undone.
  MetricPlot* speed = plots.plots().at(1);
  QCOMPARE(speed->title(), QString("Throughput"));
  speed->yAxis->setRange(4999, 5001);
  speed->followData();
  QCOMPARE(speed->yAxis->range().lower, 0.0);
}

// A learning rate that holds (wsd's stable part) is drawn at its value: the axis spans it, not -2 … 2 around it.
void TestStudioPlots::aConstantSeriesIsDrawnAtItsValue() {
  LivePlots plots;
  std::vector<StepEvent> steps;
  for (int64_t i = 1; i <= 50; ++i) {
    StepEvent e;
    e.step = i, e.tokens = i * 64, e.wall_s = i * 0.1;
    e.metrics.add("loss", 4.0 + 0.01 * i);
    e.metrics.add("lr", 0.003);
    steps.push_back(e);
  }
  plots.appendSteps(steps);
  plots.flush();
  MetricPlot* lr = nullptr;
  for (MetricPlot* p : plots.plots())
    if (p->title() == "Learning rate") lr = p;
  QVERIFY(lr);
  const QCPRange r = lr->yAxis->range();
  QVERIFY2(r.lower < 0.003 && r.upper > 0.003, qPrintable(QString("%1 … %2").arg(r.lower).arg(r.upper)));
  QVERIFY2(r.size() < 0.003, qPrintable(QString("%1 … %2").arg(r.lower).arg(r.upper)));  // was 4: -2 … 2
}

// The status bar keeps no ETA once the run has ended ("ETA 18m33s" once stayed after Stop).
void TestStudioPlots::noEtaAfterTheRunEnds() {
  MainWindow w;
  RunStart start;
  start.device = "cpu", start.total_steps = 1000;
  w.runStatus()->runStarted(start, {"cpu"});
  for (int64_t i = 1; i <= 3; ++i) w.runStatus()->stepped(fakeStep(i * 10));
  QVERIFY2(w.runStatus()->text().contains("ETA"), qPrintable(w.runStatus()->text()));
  EndEvent end;
  end.status = "stopped", end.step = 30;
  Q_EMIT w.runController()->runEnded(end);
  QCOMPARE(w.runStatus()->stateText(), QString("stopped"));
  QVERIFY2(!w.runStatus()->text().contains("ETA"), qPrintable(w.runStatus()->text()));
}

QTEST_MAIN(TestStudioPlots)
#include "test_studio_plots.moc"
