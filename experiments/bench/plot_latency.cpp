// How long the studio's event loop is busy at a stretch while 100,000 steps stream into the live plots: the
// timing that test_studio_plots states in counts (batched frames, decimated redraws). A 5 ms timer ticks in
// the GUI thread; each late tick is a stall. Prints the worst stall and the 99th percentile.
// Usage: experiments/bench/plot_latency.sh [POINTS]
#include <QApplication>
#include <QElapsedTimer>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/live/event_bridge.h"
#include "ui/live/run_controller.h"

using namespace tokamak;

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
}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  const int64_t points = argc > 1 ? std::atoll(argv[1]) : 100000;
  ui::MainWindow w;
  w.resize(1500, 950);
  w.show();
  app.processEvents();
  ui::EventBridge* bridge = w.runController()->bridge();
  std::vector<qint64> late;  // ms each 5 ms tick came after the one before, less 5
  QElapsedTimer clock;
  QTimer tick;
  tick.setInterval(5);
  QObject::connect(&tick, &QTimer::timeout, [&] { late.push_back(std::max<qint64>(0, clock.restart() - 5)); });
  std::atomic<bool> done{false};
  clock.start();
  tick.start();
  std::thread producer([&] {
    for (int64_t i = 1; i <= points; ++i) {
      bridge->on_step(fakeStep(i));
      if (i % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  QElapsedTimer wall;
  wall.start();
  while (!(done && w.livePlots()->trainPoints() == points)) app.processEvents(QEventLoop::WaitForMoreEvents, 50);
  producer.join();
  for (int64_t i = points + 1; i <= points + 50; ++i) {  // redraws with every point on every plot
    bridge->on_step(fakeStep(i));
    QElapsedTimer pause;
    pause.start();
    while (pause.elapsed() < 20) app.processEvents(QEventLoop::WaitForMoreEvents, 5);
  }
  tick.stop();
  std::vector<qint64> sorted = late;
  std::sort(sorted.begin(), sorted.end());
  const qint64 worst = sorted.empty() ? 0 : sorted.back();
  const qint64 p99 = sorted.empty() ? 0 : sorted[sorted.size() * 99 / 100];
  std::printf("%lld steps in %.1f s: %zu ticks, event-loop stall worst %lld ms, p99 %lld ms\n",
              static_cast<long long>(points + 50), wall.elapsed() / 1000.0, late.size(), static_cast<long long>(worst),
              static_cast<long long>(p99));
  return 0;
}
