// The runs panel's exports to the tools people already use (see runs_panel.h): TensorBoard's event files and an
// MLflow tracking server, through engine/fleet/export.
#include <QApplication>
#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>
#include <QPointer>
#include <QSettings>
#include <QThreadPool>
#include <cstdlib>

#include "engine/base/store/run_store.h"
#include "engine/fleet/export/mlflow_export.h"
#include "engine/fleet/export/tensorboard_export.h"
#include "engine/fleet/notify/notify.h"  // redacted_url
#include "ui/history/compare_view.h"
#include "ui/history/runs_panel.h"

namespace tokamak::ui {

QList<qint64> RunsPanel::exportSelection() const {
  return selectedRunIds().isEmpty() ? compare_->runIds() : selectedRunIds();
}

bool RunsPanel::exportTensorboard(const QList<qint64>& ids, const QString& dir, bool replace) {
  if (!ensureStore()) return false;
  if (ids.isEmpty()) {
    showError(tr("Select the runs to export first."));
    return false;
  }
  try {
    const tokamak::TensorboardExport t =
        tokamak::export_tensorboard(*store_, std::vector<int64_t>(ids.begin(), ids.end()), dir.toStdString(), replace);
    showNotice(tr("Exported %n run(s) for TensorBoard to %1 (%2 scalars): tensorboard --logdir %1", nullptr,
                  int(t.files.size()))
                   .arg(dir)
                   .arg(t.scalars));
    return true;
  } catch (const std::exception& e) {
    showError(tr("TensorBoard export failed: %1").arg(QString::fromUtf8(e.what())));
    return false;
  }
}

bool RunsPanel::exportMlflow(const QList<qint64>& ids, const QString& url, const QString& experiment, bool force) {
  if (!ensureStore()) return false;
  if (mlflowBusy_) {
    showError(tr("An MLflow export is still being sent: wait for it to finish."));
    return false;
  }
  if (ids.isEmpty()) {
    showError(tr("Select the runs to export first."));
    return false;
  }
  tokamak::MlflowOptions o;
  o.url = url.trimmed().toStdString(), o.experiment = experiment.toStdString(), o.force = force;
  if (const char* token = std::getenv("MLFLOW_TRACKING_TOKEN")) o.token = token;
  const std::string db = store_->path();
  const std::vector<int64_t> runs(ids.begin(), ids.end());
  mlflowBusy_ = true;
  showNotice(tr("Sending %n run(s) to MLflow at %1…", nullptr, int(ids.size()))
                 .arg(QString::fromStdString(tokamak::redacted_url(o.url))));
  QPointer<RunsPanel> self(this);
  QThreadPool::globalInstance()->start([self, db, runs, o] {
    QString said;
    bool failed = false;
    try {  // a pool thread that throws ends the studio: whatever goes wrong is said in the panel instead
      tokamak::RunStore store(db, tokamak::RunStore::Mode::existing);  // its own connection: not the panel's
      const auto logged = tokamak::export_mlflow(store, runs, o);
      said = tr("Logged %n run(s) to MLflow experiment '%1' at %2", nullptr, int(logged.size()))
                 .arg(QString::fromStdString(o.experiment), QString::fromStdString(tokamak::redacted_url(o.url)));
      for (const tokamak::MlflowRun& r : logged)
        if (!r.note.empty()) said += QStringLiteral("; ") + QString::fromStdString(r.note);
    } catch (const std::exception& e) {
      said = tr("MLflow export failed: %1").arg(QString::fromUtf8(e.what())), failed = true;
    } catch (...) {
      said = tr("MLflow export failed"), failed = true;
    }
    QMetaObject::invokeMethod(qApp, [self, said, failed] {
      if (!self) return;
      self->mlflowBusy_ = false;
      if (failed) self->showError(said);
      else self->showNotice(said);
    });
  });
  return true;
}

void RunsPanel::exportTensorboardWithDialog() {
  const QString dir = QFileDialog::getExistingDirectory(this, tr("Export for TensorBoard: choose its log folder"));
  if (dir.isEmpty()) return;
  // An earlier export there is replaced only when the person says so; the rule refuses anything else.
  if (!exportTensorboard(exportSelection(), dir) && message().contains(QStringLiteral("--force")) &&
      QMessageBox::question(this, tr("Export for TensorBoard"),
                            tr("%1 already holds these runs' events. Replace them?").arg(dir)) == QMessageBox::Yes)
    exportTensorboard(exportSelection(), dir, true);
}

void RunsPanel::exportMlflowWithDialog() {
  QSettings settings;
  bool ok = false;
  const QString url = QInputDialog::getText(
      this, tr("Export to MLflow"), tr("Tracking server (http://HOST:PORT; $MLFLOW_TRACKING_TOKEN is sent if set)"),
      QLineEdit::Normal, settings.value("mlflow/url", "http://127.0.0.1:5000").toString(), &ok);
  if (!ok || url.trimmed().isEmpty()) return;
  const QString experiment =
      QInputDialog::getText(this, tr("Export to MLflow"), tr("Experiment (created when missing)"), QLineEdit::Normal,
                            settings.value("mlflow/experiment", "tokamak").toString(), &ok);
  if (!ok || experiment.trimmed().isEmpty()) return;
  settings.setValue("mlflow/url", url.trimmed());  // a server address, no secret: the token stays in the environment
  settings.setValue("mlflow/experiment", experiment.trimmed());
  exportMlflow(exportSelection(), url, experiment.trimmed());
}

}  // namespace tokamak::ui
