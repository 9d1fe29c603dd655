// WhereBox (see where_box.h).
#include "ui/remote/where_box.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>

#include "engine/fleet/remote/ssh_command.h"
#include "engine/base/util/files.h"
#include "ui/common/child_process.h"
#include "ui/remote/install_dialog.h"

namespace tokamak::ui {

WhereBox::WhereBox(QWidget* parent) : QWidget(parent), job_(new ChildProcess(this)) {
  setObjectName("whereBox");
  where_ = new QComboBox;
  where_->setObjectName("where");
  where_->setEditable(true);
  where_->setInsertPolicy(QComboBox::NoInsert);
  where_->addItem(tr("This computer"));
  // The Host entries of ~/.ssh/config (or $TOKAMAK_SSH_CONFIG's, which `tokamak remote` then uses too): the
  // names the user already reaches with ssh.
  const QString config = qEnvironmentVariableIsSet("TOKAMAK_SSH_CONFIG") ? qEnvironmentVariable("TOKAMAK_SSH_CONFIG")
                                                                         : QDir::home().filePath(".ssh/config");
  try {
    if (QFileInfo(config).isReadable())
      for (const std::string& h : ssh_config_hosts(read_file(config.toStdString())))
        where_->addItem(QString::fromStdString(h));
  } catch (const std::exception&) {
    // an unreadable config lists no hosts; typing one still works
  }
  where_->setToolTip(
      tr("Train here, or on an SSH host: a Host of ~/.ssh/config or user@host[:port]. The host "
         "needs a key that logs in without a password; Install… puts Tokamak there (docs/REMOTE.md)."));
  tokamak_ = new QLineEdit("tokamak");
  tokamak_->setObjectName("hostTokamak");
  tokamak_->setToolTip(tr("The tokamak command on the host: a name on its PATH, or the full path"));
  test_ = new QPushButton(tr("Test connection"));
  test_->setObjectName("testConnection");
  install_ = new QPushButton(tr("Install…"));
  install_->setObjectName("installOnHost");
  install_->setToolTip(tr("Put this build of Tokamak and torch 2.11 on the host, check it and train 3 steps there "
                          "(tokamak remote install)"));
  result_ = new QLabel;
  result_->setObjectName("connectionResult");
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  tokamakLabel_ = new QLabel(tr("Tokamak there"));
  tokamak_->setMaximumWidth(tokamak_->fontMetrics().averageCharWidth() * 18);  // the toolbar's line fits 1366 px
  where_->setMinimumContentsLength(14);                                        // "user@host:port" typed in full
  where_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  auto* line = new QHBoxLayout(this);
  line->setContentsMargins(4, 0, 4, 0);
  line->addWidget(new QLabel(tr("Train on")));
  line->addWidget(where_);
  line->addWidget(tokamakLabel_);
  line->addWidget(tokamak_);
  line->addWidget(test_);
  line->addWidget(install_);
  line->addWidget(result_, 1);
  // The last choice comes back with the studio (a typed host too).
  QSettings settings("Tokamak", "Tokamak Studio");
  if (const QString saved = settings.value("where/host").toString(); !saved.isEmpty()) where_->setCurrentText(saved);
  if (settings.contains("where/tokamak")) tokamak_->setText(settings.value("where/tokamak").toString());
  connect(where_, &QComboBox::currentTextChanged, this, &WhereBox::update);
  connect(tokamak_, &QLineEdit::textChanged, this, &WhereBox::update);
  connect(test_, &QPushButton::clicked, this, &WhereBox::testConnection);
  connect(install_, &QPushButton::clicked, this, &WhereBox::installOnHost);
  update();
}

QString WhereBox::host() const {
  const QString text = where_->currentText().trimmed();
  return where_->currentIndex() == 0 && text == where_->itemText(0) ? QString() : text;
}

QString WhereBox::tokamakCommand() const {
  const QString t = tokamak_->text().trimmed();
  return t.isEmpty() ? "tokamak" : t;
}

QString WhereBox::resultText() const { return resultText_; }

void WhereBox::showResult(const QString& text) {
  resultText_ = text;
  // A toolbar line has no room for a wrapped paragraph: the start of the line here, all of it on hover.
  result_->setText(
      result_->fontMetrics().elidedText(text, Qt::ElideRight, 32 * result_->fontMetrics().averageCharWidth()));
  result_->setToolTip(text);
}

void WhereBox::update() {
  const bool remote = !host().isEmpty();
  datasets_.clear(), devices_.clear();  // another host (or none): the last test's lists are not its
  tokamak_->setVisible(remote);
  tokamakLabel_->setVisible(remote);
  install_->setVisible(remote);
  test_->setEnabled(remote && !job_->isRunning());
  QString problem;
  if (remote) {
    try {
      parse_ssh_target(host().toStdString());
    } catch (const std::exception& e) {
      problem = QString::fromStdString(e.what());
    }
  }
  showResult(problem);
  QSettings settings("Tokamak", "Tokamak Studio");
  settings.setValue("where/host", host());
  settings.setValue("where/tokamak", tokamak_->text());
  Q_EMIT changed();
}

void WhereBox::testConnection() {
  if (job_->isRunning() || host().isEmpty()) return;
  job_->disconnect(this);
  test_->setEnabled(false);
  showResult(tr("connecting to %1…").arg(host()));
  connect(job_, &ChildProcess::finished, this, [this](const QString& error) {
    test_->setEnabled(!host().isEmpty());
    if (!error.isEmpty()) {
      showResult(error);
      return Q_EMIT tested(false);
    }
    const QJsonObject& r = job_->result();
    QStringList devices;
    for (const QJsonValue& d : r["devices"].toArray()) devices << d.toString();
    devices_ = devices;
    datasets_.clear();
    for (const QJsonValue& v : r["datasets"].toArray()) {
      const QJsonObject d = v.toObject();
      datasets_.push_back({d["name"].toString().toStdString(), d["path"].toString().toStdString(),
                           d["kind"].toString().toStdString(), d["description"].toString().toStdString(),
                           static_cast<uint64_t>(d["tokens"].toDouble())});
    }
    showResult(tr("Tokamak %1 · %2 · %3 · %n dataset(s)", nullptr, int(datasets_.size()))
                   .arg(r["version"].toString(), devices.join("; "), r["free_disk"].toString()));
    Q_EMIT tested(true);
  });
  job_->startTokamak({"remote", "test", "--json", "--host", host(), "--tokamak", tokamakCommand()});
}

InstallDialog* WhereBox::installOnHost() {
  if (host().isEmpty()) return nullptr;
  auto* dialog = new InstallDialog(host(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  // The install says how tokamak is reached there: the plain name when a login's PATH has it, else its full path.
  connect(dialog, &InstallDialog::installed, this, [this](const QString& command) {
    if (command.isEmpty()) return;
    tokamak_->setText(command);
    testConnection();
  });
  dialog->open();
  return dialog;
}

}  // namespace tokamak::ui
