// The live plots under load: the event loop keeps answering within 50 ms while 100,000 steps stream through
// the real bridge → controller → plots path into the real window; and the plot controls (X axis, smoothing
// over a visible raw curve, log Y, hover read-out) do what they say.
#include <QtTest>

#include <QCheckBox>
#include <QComboBox>
#include <QSlider>
#include <QElapsedTimer>
#include <QSettings>
#include <atomic>
#include <thread>

#include "ui/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/run/event_bridge.h"
#include "ui/run/run_controller.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

StepEvent fakeStep(int64_t i) {
  StepEvent e;
  e.step = i, e.tokens = i * 64, e.wall_s = i * 0.01;
  e.loss = 4.0 + std::sin(i * 0.01) + 0.3 * ((i * 7919) % 13) / 13.0;
  e.lr = 1e-3, e.grad_norm = 1.0, e.tok_s = 5000 + (i % 100), e.mfu = 0.4;
  e.mem_allocated = 100000000, e.mem_reserved = 120000000, e.mem_peak = 110000000;
  return e;
}

// Largest gap between ticks of a 5 ms timer: how long the event loop was busy at a stretch.
class LatencyProbe : public QObject {
 public:
  LatencyProbe() {
    timer_.setInterval(5);
    connect(&timer_, &QTimer::timeout, this, [this] {
      worst_ = std::max(worst_, clock_.restart() - 5);
    });
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
  void initTestCase();
  void staysResponsiveWith100kPoints();
  void controlsRebuildTheCurves();
};

void TestStudioPlots::initTestCase() {
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, QDir::tempPath() + "/tokamak-test-settings");
}

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
  plots.appendEvals({{100, 6400, 1.0, 4.5}, {200, 12800, 2.0, 4.2}});
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

QTEST_MAIN(TestStudioPlots)
#include "test_studio_plots.moc"
