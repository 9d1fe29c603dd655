// The sweep page and Run ▸ Sweep… in the window (see sweep_actions.h).
#include "ui/sweep/sweep_actions.h"

#include <QAction>
#include <QTabWidget>

#include "ui/sweep/sweep_dialog.h"
#include "ui/sweep/sweep_view.h"

namespace tokamak::ui {

SweepActions::SweepActions(QTabWidget* pages, std::function<Config()> setup, QWidget* window)
    : QObject(window), pages_(pages), setup_(std::move(setup)), window_(window) {
  view_ = new SweepView;
  pages_->addTab(view_, tr("Sweeps"));
  action_ = new QAction(tr("Sweep…"), this);
  action_->setToolTip(tr("Sweep keys of this setup (grid or random, ASHA early stopping) on this computer's queue"));
  connect(action_, &QAction::triggered, this, &SweepActions::openDialog);
  connect(view_, &SweepView::newSweepRequested, this, &SweepActions::openDialog);
}

void SweepActions::setDatabase(const QString& path) {
  db_ = path;
  view_->setDatabase(path);
  if (dialog_) dialog_->setDatabase(path);
}

SweepDialog* SweepActions::openDialog() {
  if (dialog_) {
    dialog_->raise();
    dialog_->activateWindow();
    return dialog_;
  }
  Config base = setup_();
  base.checkpoint.resume.clear();  // each trial starts from scratch; the sweep resumes promoted trials itself
  base.name.clear();               // each trial is named by the sweep
  dialog_ = new SweepDialog(config_to_json(base, -1), window_);
  dialog_->setAttribute(Qt::WA_DeleteOnClose);
  dialog_->setDatabase(db_);
  connect(dialog_, &SweepDialog::started, this, [this](qint64 id) {
    view_->refresh();
    view_->showSweep(id);
    pages_->setCurrentWidget(view_);
  });
  dialog_->show();
  return dialog_;
}

}  // namespace tokamak::ui
