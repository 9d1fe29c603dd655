// SlurmDialog: "Submit to Slurm" — the job's size and place for the setup's run (partition, account, QoS,
// nodes, GPUs or CPU tasks per node, time limit, requeue), pre-filled with what was used last on that host,
// and the job script itself: "Show job script" runs `tokamak slurm submit --dry-run --json` and shows the
// script, and only then does Submit run the same command without --dry-run (and with the dry run's uid, so
// the job is the script that was shown). Any change of a field takes the script away again. Both are the
// CLI in a child process (ui/common/child_process.h): the checks, the script and sbatch are the CLI's, and a bad
// field is its one line under the fields, with nothing queued.
#pragma once
#include <QDialog>
#include <QJsonObject>
#include <QString>

#include "engine/base/config/config.h"
#include "ui/remote/slurm_info.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QTemporaryFile;

namespace tokamak::ui {

class ChildProcess;

class SlurmDialog : public QDialog {
  Q_OBJECT
 public:
  // host: "" = this computer, else the login node; tokamak: the tokamak command there; db: the run store the
  // ranks record in ("" = theirs).
  SlurmDialog(const SlurmInfo& info, const QString& host, const QString& tokamak, const Config& config,
              const QString& db, QWidget* parent = nullptr);
  ~SlurmDialog() override;

  // After accept(): `submit --json`'s object (job_id, run_uid, name, folder, script).
  const QJsonObject& submitted() const { return submitted_; }
  QString script() const;
  QString message() const;

 private:
  void buildFields(const SlurmInfo& info, const Config& config);
  QFormLayout* layOutFields();
  QStringList commandArgs() const;
  void fieldsChanged();
  void showScript();
  void submit();
  void busy(bool on);

  QString host_, tokamak_, db_;
  QTemporaryFile* config_;
  QString uid_;  // the dry run's, handed to the submit
  QComboBox *partition_, *rankKind_;
  QLineEdit *account_, *qos_, *time_;
  QSpinBox *nodes_, *ranks_;
  QCheckBox* requeue_;
  QPlainTextEdit* script_;
  QLabel* message_;
  QPushButton *show_, *submit_;
  ChildProcess* job_;
  QJsonObject submitted_;
};

}  // namespace tokamak::ui
