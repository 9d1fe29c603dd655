// SlurmDialog (see slurm_dialog.h).
#include "ui/remote/slurm_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryFile>
#include <QVBoxLayout>

#include "engine/base/run/run_folder.h"
#include "ui/common/child_process.h"

namespace tokamak::ui {

SlurmDialog::SlurmDialog(const SlurmInfo& info, const QString& host, const QString& tokamak, const Config& config,
                         const QString& db, QWidget* parent)
    : QDialog(parent), host_(host), tokamak_(tokamak), db_(db), job_(new ChildProcess(this)) {
  setObjectName("slurmDialog");
  setWindowTitle(host.isEmpty() ? tr("Submit to Slurm") : tr("Submit to Slurm on %1").arg(host));
  // The whole effective config travels as a file, as for a run started here (`--config`); over ssh the CLI
  // sends it on to the login node.
  config_ = new QTemporaryFile(this);
  if (config_->open()) {
    config_->write(QByteArray::fromStdString(config_to_json(config)));
    config_->flush();
  }
  buildFields(info, config);
  script_ = new QPlainTextEdit;
  script_->setObjectName("script");
  script_->setReadOnly(true);
  script_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  script_->setPlaceholderText(tr("The job script appears here: \"Show job script\" first, then Submit"));
  script_->setMinimumSize(640, 260);
  message_ = new QLabel;
  message_->setObjectName("slurmMessage");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  QFormLayout* form = layOutFields();
  auto* buttons = new QDialogButtonBox;
  show_ = buttons->addButton(tr("Show job script"), QDialogButtonBox::ActionRole);
  show_->setObjectName("showScript");
  submit_ = buttons->addButton(tr("Submit"), QDialogButtonBox::AcceptRole);
  submit_->setObjectName("submit");
  submit_->setEnabled(false);
  submit_->setToolTip(tr("Show the job script first: Submit queues exactly that script"));
  buttons->addButton(QDialogButtonBox::Cancel);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(script_, 1);
  layout->addWidget(message_);
  layout->addWidget(buttons);

  // Submit is not the box's accept(): it starts the child, and the dialog accepts when sbatch has answered.
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(show_, &QPushButton::clicked, this, &SlurmDialog::showScript);
  connect(submit_, &QPushButton::clicked, this, &SlurmDialog::submit);
  for (QLineEdit* e : {account_, qos_, time_}) connect(e, &QLineEdit::textChanged, this, &SlurmDialog::fieldsChanged);
  connect(partition_, &QComboBox::currentTextChanged, this, &SlurmDialog::fieldsChanged);
  connect(rankKind_, &QComboBox::currentIndexChanged, this, &SlurmDialog::fieldsChanged);
  for (QSpinBox* s : {nodes_, ranks_}) connect(s, &QSpinBox::valueChanged, this, &SlurmDialog::fieldsChanged);
  connect(requeue_, &QCheckBox::toggled, this, &SlurmDialog::fieldsChanged);
}

void SlurmDialog::buildFields(const SlurmInfo& info, const Config& config) {
  partition_ = new QComboBox;
  partition_->setObjectName("partition");
  partition_->setEditable(true);
  partition_->addItems(info.partitions);
  partition_->setCurrentText(!info.partition.isEmpty() ? info.partition : info.partitions.value(0));
  partition_->setToolTip(tr("The partition (queue) the job waits in: sinfo's list on this host"));
  account_ = new QLineEdit(info.account);
  account_->setObjectName("account");
  account_->setPlaceholderText(tr("the cluster's default"));
  qos_ = new QLineEdit(info.qos);
  qos_->setObjectName("qos");
  qos_->setPlaceholderText(tr("the cluster's default"));
  nodes_ = new QSpinBox;
  nodes_->setObjectName("nodes");
  nodes_->setRange(1, 4096);
  rankKind_ = new QComboBox;
  rankKind_->setObjectName("rankKind");
  rankKind_->addItem(tr("GPUs per node"));       // one rank (NCCL) per GPU
  rankKind_->addItem(tr("CPU tasks per node"));  // Gloo ranks
  rankKind_->setCurrentIndex(QString::fromStdString(config.device).startsWith("cuda") ? 0 : 1);
  ranks_ = new QSpinBox;
  ranks_->setObjectName("ranksPerNode");
  ranks_->setRange(1, 1024);
  time_ = new QLineEdit("01:00:00");
  time_->setObjectName("timeLimit");
  time_->setToolTip(tr("The job's time limit as sbatch takes it: HH:MM:SS, D-HH:MM:SS, minutes"));
  requeue_ = new QCheckBox(tr("Requeue: a preempted or requeued job resumes from its last checkpoint"));
  requeue_->setObjectName("requeue");
}

QFormLayout* SlurmDialog::layOutFields() {
  auto* form = new QFormLayout;
  form->addRow(tr("Partition"), partition_);
  form->addRow(tr("Account"), account_);
  form->addRow(tr("QoS"), qos_);
  form->addRow(tr("Nodes"), nodes_);
  auto* ranksRow = new QHBoxLayout;
  ranksRow->addWidget(rankKind_);
  ranksRow->addWidget(ranks_, 1);
  form->addRow(tr("Ranks"), ranksRow);
  form->addRow(tr("Time limit"), time_);
  form->addRow(requeue_);
  return form;
}

SlurmDialog::~SlurmDialog() = default;

QString SlurmDialog::script() const { return script_->toPlainText(); }
QString SlurmDialog::message() const { return message_->text(); }

// `tokamak slurm submit ... --json` with the fields as they are now (the CLI checks them).
QStringList SlurmDialog::commandArgs() const {
  QStringList a{"slurm",
                "submit",
                "--json",
                "--config",
                config_->fileName(),
                "--partition",
                partition_->currentText().trimmed(),
                "--nodes",
                QString::number(nodes_->value()),
                "--time",
                time_->text().trimmed()};
  a << (rankKind_->currentIndex() == 0 ? "--gpus-per-node" : "--ntasks-per-node") << QString::number(ranks_->value());
  if (!account_->text().trimmed().isEmpty()) a << "--account" << account_->text().trimmed();
  if (!qos_->text().trimmed().isEmpty()) a << "--qos" << qos_->text().trimmed();
  if (requeue_->isChecked()) a << "--requeue";
  if (!db_.isEmpty()) a << "--db" << db_;
  // Over ssh the login node's tokamak runs the submit (and the nodes run it); here the CLI names itself.
  if (!host_.isEmpty()) a << "--tokamak" << tokamak_;
  return a + slurmHostArgs(host_);
}

void SlurmDialog::fieldsChanged() {
  script_->clear();  // what is shown must be what Submit queues
  uid_.clear();
  message_->clear();
  submit_->setEnabled(false);
}

void SlurmDialog::busy(bool on) {
  show_->setEnabled(!on);
  submit_->setEnabled(!on && !uid_.isEmpty());
}

void SlurmDialog::showScript() {
  if (job_->isRunning()) return;
  fieldsChanged();
  const QString uid = QString::fromStdString(new_run_uid());
  message_->setText(tr("writing the job script…"));
  busy(true);
  job_->disconnect(this);
  connect(job_, &ChildProcess::finished, this, [this, uid](const QString& error) {
    const QJsonObject& r = job_->result();
    message_->setText(error);
    if (error.isEmpty()) script_->setPlainText(r["script"].toString()), uid_ = uid;
    busy(false);
  });
  job_->startTokamak(commandArgs() + QStringList{"--dry-run", "--run-uid", uid});
}

void SlurmDialog::submit() {
  if (job_->isRunning() || uid_.isEmpty()) return;
  message_->setText(tr("submitting…"));
  busy(true);
  job_->disconnect(this);
  connect(job_, &ChildProcess::finished, this, [this](const QString& error) {
    const QJsonObject& r = job_->result();
    busy(false);
    if (!error.isEmpty() || r["job_id"].toInteger() <= 0) {
      message_->setText(error.isEmpty() ? tr("sbatch gave no job id") : error);
      return;
    }
    submitted_ = r;
    accept();
  });
  job_->startTokamak(commandArgs() + QStringList{"--run-uid", uid_});
}

}  // namespace tokamak::ui
