// ScreenshotDriver: setup picture → run → live picture → stop → quit (see screenshot_driver.h).
#include "ui/screenshots/screenshot_driver.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPixmap>
#include <QTimer>
#include <cstdio>

#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/live/run_controller.h"
#include "ui/remote/install_dialog.h"
#include "ui/remote/where_box.h"
#include "ui/setup/dataset_box.h"
#include "ui/setup/setup_panel.h"

namespace tokamak::ui {

ScreenshotDriver::ScreenshotDriver(MainWindow* window, ScreenshotPlan plan)
    : QObject(window), window_(window), plan_(std::move(plan)) {}

void ScreenshotDriver::start() {
  window_->setupPanel()->datasetBox()->countTokens();  // the setup picture shows the token count
  // Give the dataset count and the first layout pass a moment before the setup picture.
  QTimer::singleShot(2500, this, [this] {
    if (!plan_.setupPath.isEmpty()) grabTo(plan_.setupPath);
    if (plan_.installPath.isEmpty()) return afterSetup();
    InstallDialog* dialog = window_->setupPanel()->whereBox()->installOnHost();
    if (!dialog) {
      std::fprintf(stderr, "tokamak-studio: an install picture needs a host chosen in \"Train on\"\n");
      return QApplication::exit(1);
    }
    auto* clock = new QElapsedTimer;
    clock->start();
    connect(dialog, &InstallDialog::ended, this, [this, dialog, clock](bool ok) {
      std::fprintf(stderr, "tokamak-studio: the install %s after %.1f s: %s\n", ok ? "ended" : "failed",
                   clock->elapsed() / 1000.0, qPrintable(dialog->resultText()));
      delete clock;
      QTimer::singleShot(300, this, [this, dialog, ok] {
        QDir().mkpath(QFileInfo(plan_.installPath).absolutePath());
        dialog->grab().save(plan_.installPath, "PNG");
        std::fprintf(stderr, "tokamak-studio: wrote %s\n", qPrintable(plan_.installPath));
        if (!ok) return QApplication::exit(1);
        dialog->close();
        // The connection test the install starts fills the host's devices and datasets in before the run.
        QTimer::singleShot(3000, this, &ScreenshotDriver::afterSetup);
      });
    });
    dialog->install();
  });
  connect(window_->runController(), &RunController::runEnded, this, [this] {
    if (!grabbedLive_) {
      std::fprintf(stderr, "tokamak-studio: the run ended before step %lld: %s\n",
                   static_cast<long long>(plan_.afterSteps), window_->runController()->lastEnd().error.c_str());
      grabTo(plan_.livePath);
    }
    QTimer::singleShot(200, qApp, &QApplication::quit);
  });
}

void ScreenshotDriver::afterSetup() {
  if (plan_.livePath.isEmpty()) return QApplication::quit();
  window_->startRun();
  auto* poll = new QTimer(this);
  connect(poll, &QTimer::timeout, this, &ScreenshotDriver::checkProgress);
  poll->start(200);
}

void ScreenshotDriver::checkProgress() {
  if (grabbedLive_ || window_->runController()->lastStep().step < plan_.afterSteps) return;
  grabbedLive_ = true;
  if (!plan_.plot.isEmpty()) {
    QComboBox* picker = window_->livePlots()->metricPicker();
    if (const int i = picker->findData(plan_.plot); i >= 0) picker->setCurrentIndex(i);
    else std::fprintf(stderr, "tokamak-studio: the run reports no metric '%s'\n", qPrintable(plan_.plot));
  }
  // One more redraw period so the last batch is on the plots before the picture.
  QTimer::singleShot(300, this, [this] {
    grabTo(plan_.livePath);
    window_->stopRun();
  });
}

bool ScreenshotDriver::grabTo(const QString& path) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  const bool ok = window_->grab().save(path, "PNG");
  std::fprintf(stderr, "tokamak-studio: %s %s\n", ok ? "wrote" : "could not write", qPrintable(path));
  return ok;
}

}  // namespace tokamak::ui
