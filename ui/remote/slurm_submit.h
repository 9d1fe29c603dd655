// SlurmSubmit: the studio's "Submit to Slurm…" action. It is offered only where the host chosen in "Where"
// has sbatch — checked there (`tokamak slurm info`, ui/remote/slurm_info.h) for this computer as soon as it is
// chosen, for an SSH host at each successful "Test connection" — and otherwise disabled with the reason in
// its tooltip. Triggered, it opens SlurmDialog for the setup's config; a job sbatch accepted is handed on as
// submitted(), and MainWindow follows its run (RunController::followSlurmJob).
#pragma once
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>

#include "engine/base/config/config.h"

class QAction;
class QWidget;

namespace tokamak::ui {

class SlurmDialog;
class SlurmProbe;
class WhereBox;

class SlurmSubmit : public QObject {
  Q_OBJECT
 public:
  SlurmSubmit(WhereBox* where, std::function<Config()> config, QWidget* parent);

  QAction* action() const { return action_; }
  void setDatabase(const QString& path) { db_ = path; }
  // Whether a run may start now (no run active, the setup has no problems) and, if not, why.
  void setAllowed(bool allowed, const QString& whyNot);
  SlurmDialog* dialog() const;  // the open dialog (tests fill it), else null

 Q_SIGNALS:
  // submit's JSON: job_id, run_uid, name, folder, script; host "" = this computer.
  void submitted(const QString& host, const QString& tokamak, const QJsonObject& job, const tokamak::Config& config);

 private:
  void whereChanged();
  void update();
  void open();

  WhereBox* where_;
  std::function<Config()> config_;
  QWidget* parent_;
  QAction* action_;
  SlurmProbe* probe_;
  QPointer<SlurmDialog> dialog_;
  QString db_, whyNot_;
  bool allowed_ = false;
};

}  // namespace tokamak::ui
