// SweepDialog (Run ▸ Sweep…): a sweep from the current setup as its base config — the keys to sweep (a list of
// values or a min/max/count range, log or linear), grid or random search, seeds, the metric and its direction,
// ASHA early stopping — or from a sweep file (resources/sweeps/*.json). It shows the plan as plan_sweep
// makes it (the trials' count and names, the rungs) and refuses bad input in one line before anything is
// queued. Start writes the sweep file and runs `tokamak sweep FILE` (the CLI's own path: every trial queued in
// one transaction, the queue worker started); the file then lies at data_dir()/sweeps/NAME-ID/sweep.json (NAME made
// one path component, as safe_file_name does; a folder already there with anything in it is never written into).
#pragma once
#include <QDialog>
#include <QList>
#include <QStringList>
#include <string>

#include "ui/sweep/sweep_form.h"

class QCheckBox;
class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QPushButton;
class QSpinBox;
class QTimer;
class QVBoxLayout;

namespace tokamak::ui {

class ChildProcess;

class SweepAxisRow;

class SweepDialog : public QDialog {
  Q_OBJECT
 public:
  // baseJson: the config every trial starts from (config_to_json of the setup).
  explicit SweepDialog(const std::string& baseJson, QWidget* parent = nullptr);
  ~SweepDialog() override;
  void setDatabase(const QString& path);  // "" = the default run store

  SweepForm form() const;
  void setForm(const SweepForm& form);  // replans at once
  // Loads a sweep file into the form; its "base" replaces the setup's. False with problem() set.
  bool openFile(const QString& path);
  std::string sweepFile() const;  // the file Start writes: the form over the base

  // The plan of the form as it is now (replan() recomputes it at once; edits replan after a short pause, on a
  // thread of the pool, and show it when it is ready).
  void replan();
  int trialCount() const { return names_.size(); }
  QStringList trialNames() const { return names_; }
  QList<qint64> rungs() const { return rungs_; }
  QString problem() const { return problem_; }  // one line; "" when every trial is valid

  // Queues the sweep through `tokamak sweep`; false (nothing queued, nothing started) when the plan has a
  // problem or a sweep is being queued. The outcome: started() or failed().
  bool start();
  bool isStarting() const { return process_ != nullptr; }

 Q_SIGNALS:
  void started(qint64 sweepId, const QString& name, const QString& file);
  void failed(const QString& why);

 private:
  void build();
  QHBoxLayout* buildRankRow();
  QHBoxLayout* buildButtonRow();
  void connectReplan();
  SweepAxisRow* addAxisRow(const SweepAxis& axis);
  void removeAxisRow(SweepAxisRow* row);
  // What the dialog shows of a plan: worked out on any thread, shown on the GUI thread.
  struct PlanView {
    QStringList names;
    QList<qint64> rungs;
    QString summary, problem;
  };
  static PlanView planOf(const std::string& file, const std::string& source, int gpus);
  void showPlan(const PlanView& view);
  void replanInBackground();
  std::string planSource() const;  // the name plan_sweep's errors give the sweep
  void scheduleReplan();
  void chooseFile();
  void childEnded();
  QString keepSweepFile(const QString& temp, const QString& name, qint64 id, QString* why);
  void showProblem(const QString& problem);

  std::string base_;
  QString db_;
  QStringList keys_;  // every config key, for the key pickers
  QLineEdit* name_;
  QVBoxLayout* axesLayout_;
  QList<SweepAxisRow*> rows_;
  QComboBox *method_, *metric_, *direction_;
  QSpinBox *count_, *seed_, *minSteps_, *eta_;
  QLineEdit* seeds_;
  QCheckBox* asha_;
  QLabel *summary_, *problemLabel_, *baseLabel_;
  QListWidget* trials_;
  QPushButton* start_;
  QTimer* replanTimer_;
  QStringList names_;
  QList<qint64> rungs_;
  QString problem_;
  ChildProcess* process_ = nullptr;  // `tokamak sweep FILE --json` while it queues
  QString tempFile_;
  int generation_ = 0;  // the newest plan asked for; an older one that comes back later is not shown
};

}  // namespace tokamak::ui
