// The studio's sweep parts put into its window with one call, so MainWindow only forwards the database: the
// "Sweeps" page (SweepView) among the window's pages, and Run ▸ Sweep…, which opens SweepDialog over the
// current setup and shows the sweep it queued.
#pragma once
#include <QObject>
#include <QPointer>
#include <functional>

#include "engine/base/config/config.h"

class QAction;
class QTabWidget;

namespace tokamak::ui {

class SweepDialog;
class SweepView;

class SweepActions : public QObject {
  Q_OBJECT
 public:
  // setup: the config Start would run now (the sweep's base).
  SweepActions(QTabWidget* pages, std::function<Config()> setup, QWidget* window);
  void setDatabase(const QString& path);
  QAction* action() const { return action_; }
  SweepView* view() const { return view_; }
  // Opens Sweep… (non-modal; a second call raises the open one). Returns the dialog.
  SweepDialog* openDialog();

 private:
  QTabWidget* pages_;
  std::function<Config()> setup_;
  QWidget* window_;
  QAction* action_;
  SweepView* view_;
  QPointer<SweepDialog> dialog_;
  QString db_;
};

}  // namespace tokamak::ui
