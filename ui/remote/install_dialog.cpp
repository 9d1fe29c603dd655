// InstallDialog (see install_dialog.h).
#include "ui/remote/install_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include "ui/common/child_process.h"

namespace tokamak::ui {

InstallDialog::InstallDialog(const QString& host, QWidget* parent)
    : QDialog(parent), host_(host), job_(new ChildProcess(this)) {
  setObjectName("installDialog");
  setWindowTitle(tr("Install Tokamak on %1").arg(host));
  auto* what = new QLabel(
      tr("Puts this build of Tokamak on %1, with torch 2.11 in a venv of its own (from PyPI, about 4 GB), "
         "checks its version and trains 3 steps there. Anything the host lacks is said before anything is "
         "pushed. Running it again on a current host does nothing.")
          .arg(host));
  what->setWordWrap(true);
  torchPython_ = new QLineEdit;
  torchPython_->setObjectName("torchPython");
  torchPython_->setPlaceholderText(tr("empty: a venv of its own, filled by pip"));
  torchPython_->setToolTip(tr("A python on the host that already has torch 2.11 (its full path); the install then "
                              "uses its torch and downloads nothing"));
  // The last one given comes back: a host image's python is usually the same path the next time.
  torchPython_->setText(QSettings("Tokamak", "Tokamak Studio").value("install/torchPython").toString());
  auto* form = new QFormLayout;
  form->addRow(tr("torch from"), torchPython_);
  step_ = new QLabel;
  step_->setObjectName("installStep");
  step_->setWordWrap(true);
  bar_ = new QProgressBar;
  bar_->setObjectName("installProgress");
  bar_->setRange(0, 100);
  bar_->setValue(0);
  result_ = new QLabel;
  result_->setObjectName("installResult");
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  log_ = new QPlainTextEdit;
  log_->setObjectName("installLog");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(500);
  start_ = new QPushButton(tr("Install"));
  start_->setObjectName("startInstall");
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addButton(start_, QDialogButtonBox::ActionRole);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(start_, &QPushButton::clicked, this, &InstallDialog::install);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(what);
  layout->addLayout(form);
  layout->addWidget(step_);
  layout->addWidget(bar_);
  layout->addWidget(log_, 1);
  layout->addWidget(result_);
  layout->addWidget(buttons);
  resize(620, 420);  // inside a 1366×768 screen with room for the window around it

  connect(job_, &ChildProcess::progress, this, [this](const QString& what, qint64 done, qint64 total) {
    if (what != step_->text()) log_->appendPlainText(what);
    step_->setText(what);
    if (total > 0) bar_->setValue(static_cast<int>(100 * done / total));
  });
  connect(job_, &ChildProcess::errorLine, this, [this](const QString& line) { log_->appendPlainText(line); });
  connect(job_, &ChildProcess::finished, this, [this](const QString& error) {
    start_->setText(tr("Install"));
    if (!error.isEmpty()) return showEnd(false, error);
    const QJsonObject r = job_->result();
    bar_->setValue(100);
    showEnd(true, r["summary"].toString() + (r["smoke"].toString().isEmpty()
                                                 ? QString()
                                                 : "\n" + tr("3 steps there: %1").arg(r["smoke"].toString())));
    Q_EMIT installed(r["command"].toString());
  });
}

bool InstallDialog::isRunning() const { return job_->isRunning(); }

void InstallDialog::showEnd(bool ok, const QString& text) {
  resultText_ = text;
  result_->setText(text);
  result_->setStyleSheet(ok ? QString() : "color: #b00020");
  step_->setText(ok ? tr("done") : tr("stopped"));
  Q_EMIT ended(ok);
}

void InstallDialog::install() {
  if (job_->isRunning()) return job_->cancel();
  resultText_.clear();
  result_->clear();
  log_->clear();
  bar_->setValue(0);
  QStringList args = {"remote", "install", "--json", "--host", host_};
  const QString py = torchPython_->text().trimmed();
  if (!py.isEmpty()) args << "--torch-python" << py;
  QSettings("Tokamak", "Tokamak Studio").setValue("install/torchPython", py);
  step_->setText(tr("looking at %1…").arg(host_));
  start_->setText(tr("Cancel"));
  job_->startTokamak(args);
}

}  // namespace tokamak::ui
