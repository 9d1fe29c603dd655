// tokamak-studio: the desktop app. Thin: checks for a display, builds the main window (ui/), runs Qt.
// Without a display it says so and exits 2, and scripts/start.sh falls back to the headless trainer.
#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>
#include <cstdio>

#include "engine/base/config/config.h"
#include "ui/window/main_window.h"
#include "ui/screenshots/screenshot_driver.h"
#include "ui/setup/setup_files.h"
#include "ui/setup/setup_panel.h"
#include "ui/sweep/sweep_actions.h"
#include "ui/sweep/sweep_dialog.h"

namespace {

bool hasDisplay() {
  return !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
         !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

}  // namespace

int main(int argc, char** argv) {
  if (!hasDisplay()) {
    std::fprintf(stderr,
                 "tokamak-studio: no display; run `tokamak train` for the headless trainer "
                 "(scripts/start.sh does this for you)\n");
    return 2;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Tokamak");
  QApplication::setApplicationName("Tokamak Studio");
  QApplication::setApplicationVersion(TOKAMAK_VERSION);
  QApplication::setWindowIcon(QIcon(":/icons/tokamak.svg"));

  QCommandLineParser cli;
  cli.setApplicationDescription("Tokamak Studio: train GPT-style models and watch them learn");
  cli.addHelpOption();
  cli.addVersionOption();
  QCommandLineOption config("config", "Open this setup (JSON, as saved by the studio or `tokamak config`).", "FILE");
  QCommandLineOption db("db", "Run store to use (default: ~/.local/share/tokamak/runs.db).", "FILE");
  QCommandLineOption sweep("sweep", "Open Run > Sweep... on this sweep file (resources/sweeps/*.json).", "FILE");
  // Hidden: how docs/screenshots are made under Xvfb (see ui/screenshots/screenshot_driver.h).
  QCommandLineOption setupShot("setup-screenshot", "", "PATH");
  QCommandLineOption liveShot("screenshot", "", "PATH");
  QCommandLineOption afterSteps("after-steps", "", "N", "50");
  QCommandLineOption shotPlot("plot", "", "METRIC");
  QCommandLineOption installShot("install-screenshot", "", "PATH");  // Install… on the chosen host, then the run
  // Hidden: quits once the window has been shown and the events its showing queued are handled, so that
  // `time tokamak-studio --quit-when-shown` is the cold start to a painted window (docs/PERFORMANCE.md).
  QCommandLineOption quitWhenShown("quit-when-shown");
  for (QCommandLineOption* o : {&setupShot, &liveShot, &afterSteps, &shotPlot, &installShot, &quitWhenShown})
    o->setFlags(QCommandLineOption::HiddenFromHelp);
  cli.addOptions({config, db, sweep, setupShot, liveShot, afterSteps, shotPlot, installShot, quitWhenShown});
  cli.process(app);

  tokamak::ui::MainWindow window;
  if (cli.isSet(db)) window.setDatabase(cli.value(db));
  if (cli.isSet(config)) {
    tokamak::Config c;
    QString error;
    if (!tokamak::ui::loadSetup(cli.value(config), &c, &error)) {
      std::fprintf(stderr, "tokamak-studio: %s\n", qPrintable(error));
      return 1;
    }
    window.setupPanel()->setConfig(c);
  }
  window.show();
  if (cli.isSet(quitWhenShown)) {
    window.repaint();  // the first paint, done now rather than left to the backing store's next flush
    QTimer::singleShot(0, &app, &QApplication::quit);
  }
  if (cli.isSet(sweep)) {
    tokamak::ui::SweepDialog* dialog = window.sweeps()->openDialog();
    if (!dialog->openFile(cli.value(sweep))) {
      std::fprintf(stderr, "tokamak-studio: %s\n", qPrintable(dialog->problem()));
      return 1;
    }
  }
  if (cli.isSet(setupShot) || cli.isSet(liveShot) || cli.isSet(installShot)) {
    auto* driver = new tokamak::ui::ScreenshotDriver(
        &window, {cli.value(setupShot), cli.value(liveShot), cli.value(afterSteps).toLongLong(), cli.value(shotPlot),
                  cli.value(installShot)});
    driver->start();
  }
  return app.exec();
}
