// SpeedrunBox: the speedrun's switches and the time-to-target fields (see speedrun_box.h).
#include "ui/setup/speedrun_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <algorithm>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {
namespace {

constexpr const char* kChoiceKeys[] = {"model.norm",     "model.mlp_act", "model.position",
                                       "optimizer.name", "schedule.name", "optimizer.muon_ns"};
constexpr const char* kSwitchKeys[] = {"model.qk_norm", "model.zero_init_proj", "model.unet_skips"};

QComboBox* choiceBox(const std::string& key) {
  auto* c = new QComboBox;
  for (const ChoiceInfo& row : choices_of(key)) {
    c->addItem(QString::fromStdString(row.value), QString::fromStdString(row.value));
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), Qt::ToolTipRole);
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), Qt::UserRole + 1);
  }
  return c;
}

QLineEdit* numberEdit() { return new QLineEdit; }  // its tooltip comes with its key (KeyBindings::bind)

}  // namespace

SpeedrunBox::SpeedrunBox(KeyBindings* keys, QWidget* parent)
    : QGroupBox(tr("Speedrun: fewer tokens to the target"), parent), keys_(keys) {
  setObjectName(QStringLiteral("speedrunBox"));
  setToolTip(
      tr("The GPT-2 speedrun's switches (modded-nanogpt): they change what is learned per token, so "
         "compare runs by time to a target loss (Training → Target val loss), not by tok/s alone"));
  auto* form = new QFormLayout(this);
  const QString labels[] = {tr("Norm"),      tr("MLP activation"), tr("Positions"),
                            tr("Optimizer"), tr("LR schedule"),    tr("Orthogonaliser")};
  QComboBox* muonNs = nullptr;  // the last choice: it goes under "More"
  for (size_t i = 0; i < std::size(kChoiceKeys); ++i) {
    auto* box = choiceBox(kChoiceKeys[i]);
    keys->bind(kChoiceKeys[i], box);
    if (i + 1 < std::size(kChoiceKeys)) form->addRow(labels[i], box);
    else muonNs = box;
  }
  auto* qk = new QCheckBox(tr("QK-norm"));
  auto* zero = new QCheckBox(tr("Zero-initialised output projections"));
  auto* unet = new QCheckBox(tr("U-net skips"));
  for (auto [box, key] :
       {std::pair{qk, kSwitchKeys[0]}, std::pair{zero, kSwitchKeys[1]}, std::pair{unet, kSwitchKeys[2]}}) {
    keys->bind(key, box);
  }
  auto* checks = new QHBoxLayout;
  checks->addWidget(qk);
  checks->addWidget(unet);
  checks->addStretch(1);
  form->addRow(checks);
  form->addRow(zero);
  auto* softcap = numberEdit();
  keys->bind("model.logit_softcap", softcap);
  form->addRow(tr("Logit soft-cap"), softcap);
  auto* muonLr = numberEdit();
  keys->bind("optimizer.muon_lr", muonLr);
  form->addRow(tr("Muon learning rate"), muonLr);
  // The speedrun's later switches behind a disclosure: shown, they would push the speed-up switches below the fold at
  // 1366×768. A setup that uses one opens it (updateAvailability).
  more_ = new QToolButton;
  more_->setObjectName(QStringLiteral("speedrunMore"));
  more_->setCheckable(true);
  more_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  more_->setArrowType(Qt::RightArrow);
  more_->setText(tr("More switches"));
  more_->setToolTip(
      tr("Polar Express, head and embedding learning rates, value embeddings, sequence and batch "
         "warm-ups"));
  more_->setAutoRaise(true);
  form->addRow(more_);
  auto* extra = new QWidget;
  extra->setObjectName(QStringLiteral("speedrunExtra"));
  auto* extraForm = new QFormLayout(extra);
  extraForm->setContentsMargins(0, 0, 0, 0);
  extraForm->addRow(labels[std::size(kChoiceKeys) - 1], muonNs);
  for (auto [label, key] :
       {std::pair{tr("Head lr"), "optimizer.head_lr"}, std::pair{tr("Embedding lr"), "optimizer.embed_lr"},
        std::pair{tr("Value embeddings"), "model.value_embeddings"},
        std::pair{tr("Sequence warm-up steps"), "train.seq_warmup"},
        std::pair{tr("Batch warm-up steps"), "train.batch_warmup"}}) {
    auto* e = numberEdit();
    e->setObjectName(QString::fromLatin1(key));
    e->setPlaceholderText(tr("0 = off"));
    keys->bind(key, e);
    extraForm->addRow(label, e);
  }
  extra->hide();
  form->addRow(extra);
  connect(more_, &QToolButton::toggled, this, [this, extra](bool on) {
    more_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    extra->setVisible(on);
  });
}

void SpeedrunBox::updateAvailability(const Config& config, int cudaDevices) {
  if (config.optimizer.muon_ns != MuonNs::kNewtonSchulz || config.optimizer.head_lr > 0 || config.optimizer.embed_lr > 0 ||
      config.model.value_embeddings > 0 || config.train.seq_warmup > 0 || config.train.batch_warmup > 0)
    more_->setChecked(true);
  for (const char* key : kChoiceKeys) {
    auto* combo = qobject_cast<QComboBox*>(keys_->widget(key));
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    for (int i = 0; i < combo->count(); ++i) {
      // The current choice stays selectable even when it is a problem: the user must be able to leave it.
      const QString why = i == combo->currentIndex()
                              ? QString()
                              : reasonAgainst(config, key, combo->itemData(i).toString(), cudaDevices);
      model->item(i)->setEnabled(why.isEmpty());
      const QString help = combo->itemData(i, Qt::UserRole + 1).toString();
      combo->setItemData(i, why.isEmpty() ? help : help + tr("\n\nUnavailable: ") + why, Qt::ToolTipRole);
    }
  }
  for (const char* key : kSwitchKeys) {
    auto* box = qobject_cast<QCheckBox*>(keys_->widget(key));
    const QString why = box->isChecked() ? QString() : reasonAgainst(config, key, "true", cudaDevices);
    box->setEnabled(why.isEmpty());
    box->setToolTip(box->property("tip").toString() + (why.isEmpty() ? QString() : tr("\n\nUnavailable: ") + why));
  }
}

QLayout* targetRow(KeyBindings* keys) {
  auto* row = new QHBoxLayout;
  auto* target = numberEdit();
  target->setObjectName(QStringLiteral("targetValLoss"));
  target->setPlaceholderText(QObject::tr("0 = off"));
  target->setMaximumWidth(target->fontMetrics().averageCharWidth() * 10);  // "3.28": no need for a line's width
  keys->bind("eval.target_val_loss", target);
  row->addWidget(target, 1);
  auto* stop = new QCheckBox(QObject::tr("stop there"));
  keys->bind("eval.stop_at_target", stop);
  row->addWidget(stop);
  return row;
}

}  // namespace tokamak::ui
