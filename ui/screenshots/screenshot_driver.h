// ScreenshotDriver: the hidden `--screenshot` mode of tokamak-studio that makes docs/screenshots under Xvfb.
// It grabs the window with the setup shown, starts the run, grabs it again once the run has reported
// `afterSteps` steps, then stops the run and quits. With an install picture it first installs Tokamak on the host
// chosen in "Train on" through Install… (one click), grabs the dialog and says how long it took; the run (the
// second click) then trains there. QWidget::grab() renders the window itself, so the
// pictures need no window manager or screen-capture tool.
#pragma once
#include <QObject>
#include <QString>

namespace tokamak::ui {

class MainWindow;

struct ScreenshotPlan {
  QString setupPath;  // "" = no setup picture
  QString livePath;   // "" = no live picture (and no run)
  qint64 afterSteps = 50;
  QString plot;  // the metric drawn in the live page's last plot for the picture ("" = as the studio picks)
  QString installPath;  // "" = none; else Install… on the host of "Train on" first, its dialog grabbed at the end
};

class ScreenshotDriver : public QObject {
  Q_OBJECT
 public:
  ScreenshotDriver(MainWindow* window, ScreenshotPlan plan);
  void start();

 private:
  bool grabTo(const QString& path);
  void afterSetup();
  void checkProgress();

  MainWindow* window_;
  ScreenshotPlan plan_;
  bool grabbedLive_ = false;
};

}  // namespace tokamak::ui
