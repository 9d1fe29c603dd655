// SlurmSubmit (see slurm_submit.h).
#include "ui/remote/slurm_submit.h"

#include <QAction>
#include <QWidget>

#include "ui/remote/slurm_dialog.h"
#include "ui/remote/slurm_info.h"
#include "ui/remote/where_box.h"

namespace tokamak::ui {

SlurmSubmit::SlurmSubmit(WhereBox* where, std::function<Config()> config, QWidget* parent)
    : QObject(parent), where_(where), config_(std::move(config)), parent_(parent) {
  action_ = new QAction(tr("Submit to Slurm…"), this);
  action_->setObjectName("submitSlurm");
  probe_ = new SlurmProbe(this);
  connect(probe_, &SlurmProbe::probed, this, &SlurmSubmit::update);
  connect(where_, &WhereBox::changed, this, &SlurmSubmit::whereChanged);
  // A host is asked once the user has tested the connection: never an ssh login per typed character.
  connect(where_, &WhereBox::tested, this, [this](bool ok) {
    if (ok) probe_->probe(where_->host());
  });
  connect(action_, &QAction::triggered, this, &SlurmSubmit::open);
  whereChanged();
}

SlurmDialog* SlurmSubmit::dialog() const { return dialog_; }

void SlurmSubmit::whereChanged() {
  if (where_->host().isEmpty() && !probe_->known({})) probe_->probe({});
  update();
}

void SlurmSubmit::setAllowed(bool allowed, const QString& whyNot) {
  allowed_ = allowed, whyNot_ = whyNot;
  update();
}

void SlurmSubmit::update() {
  const QString host = where_->host();
  const QString place = host.isEmpty() ? tr("this computer") : host;
  QString tip;
  bool sbatch = false;
  if (!probe_->known(host))
    tip = host.isEmpty() || probe_->asking(host)
              ? tr("Looking for Slurm's sbatch on %1…").arg(place)
              : tr("Test the connection to %1 first: Submit to Slurm needs sbatch there").arg(place);
  else if (const SlurmInfo i = probe_->info(host); !i.sbatch)
    tip = tr("Not offered: %1").arg(i.why.isEmpty() ? tr("no sbatch on %1").arg(place) : i.why);
  else {
    sbatch = true;
    tip = allowed_ ? tr("Queue this setup as a Slurm job on %1 (the job script is shown first)").arg(place) : whyNot_;
  }
  action_->setEnabled(sbatch && allowed_);
  action_->setToolTip(tip);
}

void SlurmSubmit::open() {
  const QString host = where_->host(), tokamak = where_->tokamakCommand();
  if (dialog_ || !action_->isEnabled()) return;
  const Config config = config_();
  dialog_ = new SlurmDialog(probe_->info(host), host, tokamak, config, db_, parent_);
  dialog_->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog_, &QDialog::accepted, this, [this, host, tokamak, config] {
    Q_EMIT submitted(host, tokamak, dialog_->submitted(), config);
    probe_->probe(host);  // the partition, account and QoS just used are the remembered ones now
  });
  dialog_->open();
}

}  // namespace tokamak::ui
