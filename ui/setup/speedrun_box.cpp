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
#include <algorithm>

#include "engine/config/choices.h"
#include "engine/config/config.h"
#include "engine/util/error.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {
namespace {

constexpr const char* kChoiceKeys[] = {"model.norm", "model.mlp_act", "model.position", "opt.optimizer",
                                       "opt.schedule"};
constexpr const char* kSwitchKeys[] = {"model.qk_norm", "model.zero_init_proj"};

// The registry's help of `key` (the tooltip of a key without a choice table).
QString keyHelp(const std::string& key) {
  for (const KeyDoc& k : config_keys())
    if (k.key == key) return QString::fromStdString(k.help);
  return {};
}

QComboBox* choiceBox(const std::string& key) {
  auto* c = new QComboBox;
  for (const ChoiceInfo& row : choices_of(key)) {
    c->addItem(QString::fromStdString(row.value), QString::fromStdString(row.value));
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), Qt::ToolTipRole);
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), Qt::UserRole + 1);
  }
  return c;
}

QLineEdit* numberEdit(const std::string& key) {
  auto* e = new QLineEdit;
  e->setToolTip(keyHelp(key) + QStringLiteral(" (") + QString::fromStdString(key) + QStringLiteral(")"));
  return e;
}

}  // namespace

SpeedrunBox::SpeedrunBox(KeyBindings* keys, QWidget* parent)
    : QGroupBox(tr("Speedrun: fewer tokens to the target"), parent), keys_(keys) {
  setObjectName(QStringLiteral("speedrunBox"));
  setToolTip(
      tr("The GPT-2 speedrun's switches (modded-nanogpt): they change what is learned per token, so "
         "compare runs by time to a target loss (Training → Target val loss), not by tok/s alone"));
  auto* form = new QFormLayout(this);
  const QString labels[] = {tr("Norm"), tr("MLP activation"), tr("Positions"), tr("Optimizer"), tr("LR schedule")};
  for (size_t i = 0; i < std::size(kChoiceKeys); ++i) {
    auto* box = choiceBox(kChoiceKeys[i]);
    keys->bind(kChoiceKeys[i], box);
    form->addRow(labels[i], box);
  }
  auto* qk = new QCheckBox(tr("QK-norm"));
  auto* zero = new QCheckBox(tr("Zero-initialised output projections"));
  for (auto [box, key] : {std::pair{qk, kSwitchKeys[0]}, std::pair{zero, kSwitchKeys[1]}}) {
    box->setProperty("tip", keyHelp(key));
    box->setToolTip(keyHelp(key));
    keys->bind(key, box);
    form->addRow(box);
  }
  auto* softcap = numberEdit("model.logit_softcap");
  keys->bind("model.logit_softcap", softcap);
  form->addRow(tr("Logit soft-cap"), softcap);
  auto* muonLr = numberEdit("train.muon_lr");
  keys->bind("train.muon_lr", muonLr);
  form->addRow(tr("Muon learning rate"), muonLr);
}

void SpeedrunBox::updateAvailability(const Config& config, int cudaDevices) {
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
  auto* target = numberEdit("train.target_val_loss");
  target->setObjectName(QStringLiteral("targetValLoss"));
  target->setPlaceholderText(QObject::tr("0 = off"));
  target->setMaximumWidth(target->fontMetrics().averageCharWidth() * 10);  // "3.28": no need for a line's width
  keys->bind("train.target_val_loss", target);
  row->addWidget(target, 1);
  auto* stop = new QCheckBox(QObject::tr("stop there"));
  stop->setToolTip(keyHelp("train.stop_at_target"));
  keys->bind("train.stop_at_target", stop);
  row->addWidget(stop);
  return row;
}

}  // namespace tokamak::ui
