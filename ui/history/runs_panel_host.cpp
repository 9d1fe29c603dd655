// The runs panel's actions on a run that trained on an SSH host (see runs_panel.h): download a checkpoint,
// evaluate, export — each a `tokamak remote …` child (ui/common/child_process.h), so the window never waits on the
// network. The run's host is its row's remote ("ssh:HOST", written by JournalIngest); the tokamak command
// there is the one "Where" was last given.
#include <QFileDialog>
#include <QJsonObject>
#include <QLocale>
#include <QProgressBar>
#include <QSettings>

#include "engine/base/store/journal_ingest.h"
#include "engine/base/store/run_store.h"
#include "ui/common/child_process.h"
#include "ui/history/compare_view.h"
#include "ui/history/runs_panel.h"

namespace tokamak::ui {

bool RunsPanel::hostOf(qint64 id, QString* host, QString* uid) {
  if (!ensureStore()) return false;
  try {
    const std::string remote = run_remote(*store_, id);
    *host = remote.rfind("ssh:", 0) == 0 ? QString::fromStdString(remote.substr(4)) : QString();
    *uid = QString::fromStdString(store_->run(id).uid);
    return true;
  } catch (const std::exception& e) {
    showError(QString::fromUtf8(e.what()));
    return false;
  }
}

bool RunsPanel::isDownloading() const { return hostJob_->isRunning(); }

// `tokamak remote COMMAND --host HOST ARGS --json` for run ID's host; the caller connects to finished().
bool RunsPanel::startHostJob(qint64 id, const QString& command, const QStringList& args, const QString& doing) {
  if (hostJob_->isRunning()) {
    showError(tr("A job on a host is still running: wait for it to finish."));
    return false;
  }
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return false;
  if (host.isEmpty()) {
    showError(tr("Run #%1 trained on this computer, not on an SSH host.").arg(id));
    return false;
  }
  // The tokamak command on the host: "Where"'s (ui/remote/where_box.cpp keeps it in the settings).
  const QString tokamak = QSettings("Tokamak", "Tokamak Studio").value("where/tokamak", "tokamak").toString();
  disconnect(hostJob_, nullptr, this, nullptr);
  connect(hostJob_, &ChildProcess::progress, this, [this](const QString& what, qint64 done, qint64 total) {
    downloadProgress_->setRange(0, 1000);
    downloadProgress_->setValue(total > 0 ? int(1000 * double(done) / double(total)) : 0);
    downloadProgress_->setFormat(what + QStringLiteral(": %p%"));
  });
  connect(hostJob_, &ChildProcess::finished, downloadProgress_, &QWidget::hide);
  downloadProgress_->setRange(0, 0);  // busy until the first progress line
  downloadProgress_->setFormat(tr("%1 on %2…").arg(doing, host));
  downloadProgress_->show();
  showNotice(tr("Run #%1: %2 on %3…").arg(id).arg(doing, host));
  return hostJob_->startTokamak(QStringList{"remote", command, "--host", host, "--tokamak", tokamak} + args +
                                QStringList{"--json"});
}

static QString downloadedText(const QJsonObject& r) {
  const qint64 resumed = r["resumed_from"].toInteger();
  return QObject::tr("%1 (%2 bytes, sha256 verified%3)")
      .arg(r["path"].toString(), QLocale().toString(r["bytes"].toInteger()),
           r["already_here"].toBool() ? QObject::tr("; it was here already")
           : resumed > 0              ? QObject::tr("; continued at %L1 bytes").arg(resumed)
                                      : QString());
}

bool RunsPanel::downloadCheckpoint(qint64 id, const QString& folder, qint64 step) {
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return false;
  if (host.isEmpty()) {
    const QString here = lastCheckpoint(id);
    if (!here.isEmpty())
      showError(tr("Run #%1 trained on this computer: its checkpoint is here already: %2").arg(id).arg(here));
    return false;
  }
  QStringList args{uid};
  if (step > 0) args << QString::number(step);
  if (!startHostJob(id, "download", args << "--to" << folder, tr("downloading its checkpoint"))) return false;
  connect(hostJob_, &ChildProcess::finished, this, [this, id, host](const QString& error) {
    const QJsonObject& r = hostJob_->result();
    if (!error.isEmpty()) return showError(tr("Download from %1 failed: %2").arg(host, error));
    showNotice(tr("Downloaded run #%1's checkpoint from %2 to %3").arg(id).arg(host, downloadedText(r)));
  });
  return true;
}

bool RunsPanel::downloadHostPath(qint64 id, const QString& remotePath, const QString& folder) {
  if (!startHostJob(id, "download", {"--path", remotePath, "--to", folder}, tr("downloading %1").arg(remotePath)))
    return false;
  connect(hostJob_, &ChildProcess::finished, this, [this, remotePath](const QString& error) {
    const QJsonObject& r = hostJob_->result();
    if (!error.isEmpty()) return showError(tr("Download of %1 failed: %2").arg(remotePath, error));
    showNotice(tr("Downloaded %1 to %2").arg(remotePath, downloadedText(r)));
  });
  return true;
}

bool RunsPanel::evaluateOnHost(qint64 id, const QString& task) {
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return false;
  const QStringList args{uid, "--task", task, "--db", QString::fromStdString(store_->path())};
  if (!startHostJob(id, "eval", args, tr("evaluating on %1").arg(task))) return false;
  connect(hostJob_, &ChildProcess::finished, this, [this, id, host, task](const QString& error) {
    const QJsonObject& r = hostJob_->result();
    if (!error.isEmpty()) return showError(tr("Evaluation of run #%1 on %2 failed: %3").arg(id).arg(host, error));
    showEvaluation(id, r, task, host);
  });
  return true;
}

bool RunsPanel::exportOnHost(qint64 id, const QString& hostFolder, const QString& downloadTo, const QString& format,
                             const QString& type) {
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return false;
  QStringList args{uid, "--format", format, "--out", hostFolder};
  if (!type.isEmpty()) args << "--type" << type;
  if (!startHostJob(id, "export", args, tr("exporting"))) return false;
  connect(
      hostJob_, &ChildProcess::finished, this, [this, id, host, hostFolder, downloadTo, format](const QString& error) {
        if (!error.isEmpty()) return showError(tr("Export of run #%1 on %2 failed: %3").arg(id).arg(host, error));
        showNotice(tr("Exported run #%1 for %2 on %3 to %4 (Download copies it here)")
                       .arg(id)
                       .arg(format == QLatin1String("gguf") ? tr("llama.cpp") : tr("Hugging Face"), host, hostFolder));
        // Queued: this job's finished() is still being delivered.
        if (!downloadTo.isEmpty())
          QMetaObject::invokeMethod(
              this, [this, id, hostFolder, downloadTo] { downloadHostPath(id, hostFolder, downloadTo); },
              Qt::QueuedConnection);
      });
  return true;
}

void RunsPanel::downloadWithDialog() {
  const qint64 id = selectedRunIds().value(0);
  if (id <= 0) return showError(tr("Select the run whose checkpoint to download first."));
  QString host, uid;
  if (!hostOf(id, &host, &uid)) return;
  if (host.isEmpty()) {
    downloadCheckpoint(id, {});  // says where its checkpoint is
    return;
  }
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Download checkpoint: choose a folder"));
  if (!folder.isEmpty()) downloadCheckpoint(id, folder);
}

}  // namespace tokamak::ui
