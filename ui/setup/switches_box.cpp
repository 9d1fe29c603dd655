// SwitchesBox: grouped speed-up switches; each one's tooltip is its key's description (see switches_box.h).
#include "ui/setup/switches_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {
namespace {

constexpr int kHelpRole = Qt::UserRole + 1;  // the row's own help, kept while the tooltip adds a reason

// A combo box over `key`'s choice table (engine/base/config/choices.h): the values, and each row's help as its
// tooltip. Rows that are not implemented or need another device are greyed out by updateAvailability().
QComboBox* choices(const std::string& key) {
  auto* c = new QComboBox;
  for (const ChoiceInfo& row : choices_of(key)) {
    c->addItem(QString::fromStdString(row.value), QString::fromStdString(row.value));
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), Qt::ToolTipRole);
    c->setItemData(c->count() - 1, QString::fromStdString(row.help), kHelpRole);
  }
  return c;
}

// Its tooltip is the key's description, set when it is bound (KeyBindings::bind).
QCheckBox* check(const QString& text) { return new QCheckBox(text); }

// Opens a group: its name is the label of its first row.
QString switchGroup(QFormLayout* form, const QString& title) {
  if (form->rowCount() > 0) form->addItem(new QSpacerItem(0, 6));  // a little air between groups
  return title;
}

// A row: `label` (a group's name on its first row, "" after) beside one widget or several side by side.
void switchRow(QFormLayout* form, const QString& label, std::initializer_list<QWidget*> widgets) {
  if (widgets.size() == 1) return form->addRow(label, *widgets.begin());
  auto* line = new QHBoxLayout;
  for (QWidget* w : widgets) line->addWidget(w);
  line->addStretch(1);
  form->addRow(label, line);
}

}  // namespace

SwitchesBox::SwitchesBox(KeyBindings* keys, QWidget* parent) : QWidget(parent), keys_(keys) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  // A title over the groups, so the switches are found at a glance whether they stand beside the model or,
  // in a narrow dock, under it.
  auto* title = new QLabel(tr("<b>Speed-ups</b> — hover a switch for what it does"));
  title->setObjectName("switchesTitle");
  title->setWordWrap(true);
  layout->addWidget(title);
  // One frame, a group's name beside its first row: a frame per group cost a title bar each and put the last
  // switches below the fold of a 768-pixel screen.
  auto* frame = new QGroupBox;
  auto* form = new QFormLayout(frame);
  form->setVerticalSpacing(3);
  layout->addWidget(frame);
  addComputeSwitches(form);
  addTrainingSwitches(form);

  unavailable_ = new QLabel;
  unavailable_->setObjectName("unavailableSwitches");
  unavailable_->setWordWrap(true);
  // Wrapped to the switches' width: its long lines (one per refused switch) must not widen the column.
  unavailable_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  layout->addWidget(unavailable_);
}

void SwitchesBox::addComputeSwitches(QFormLayout* form) {
  auto* prec = choices("speed.precision");
  keys_->bind("speed.precision", prec);
  switchRow(form, switchGroup(form, tr("Precision")), {prec});
  auto* fp8 = check(tr("FP8 matmuls (MLP)"));
  keys_->bind("speed.fp8", fp8);
  switchRow(form, QString(), {fp8});

  auto* attn = choices("speed.attention");
  keys_->bind("speed.attention", attn);
  switchRow(form, switchGroup(form, tr("Attention")), {attn});
  auto* backend = choices("speed.sdpa_backend");
  keys_->bind("speed.sdpa_backend", backend);
  switchRow(form, tr("Backend"), {backend});

  auto* layers = choices("speed.layers");
  keys_->bind("speed.layers", layers);
  switchRow(form, switchGroup(form, tr("Kernels")), {layers});
  auto* graphs = check(tr("CUDA graphs"));
  keys_->bind("speed.cuda_graphs", graphs);
  auto* glue = check(tr("Fused glue"));
  keys_->bind("speed.fused_glue", glue);
  switchRow(form, QString(), {graphs, glue});
  auto* pad = check(tr("Pad vocabulary to 64"));
  pad->setProperty("onValue", "64");
  pad->setProperty("offValue", "1");
  keys_->bind("model.vocab_pad_multiple", pad);
  switchRow(form, QString(), {pad});
}

void SwitchesBox::addTrainingSwitches(QFormLayout* form) {
  auto* fused = check(tr("Fused AdamW"));
  keys_->bind("speed.fused_adamw", fused);
  switchRow(form, switchGroup(form, tr("Optimizer")), {fused});

  auto* pin = check(tr("Pinned memory"));  // partly checked = auto
  pin->setTristate(true);
  pin->setProperty("autoValue", "auto");
  keys_->bind("speed.pin_memory", pin);
  switchRow(form, switchGroup(form, tr("Data")), {pin});
  auto* prefetch = check(tr("Prefetch the next batch"));
  keys_->bind("speed.prefetch", prefetch);
  switchRow(form, QString(), {prefetch});

  auto* ckpt = check(tr("Activation checkpointing"));
  keys_->bind("speed.activation_checkpointing", ckpt);
  switchRow(form, switchGroup(form, tr("Memory")), {ckpt});
  auto* tie = check(tr("Tie weights"));
  keys_->bind("model.tie_weights", tie);
  switchRow(form, QString(), {tie});
  auto* accum = new QSpinBox;
  accum->setRange(1, 4096);
  keys_->bind("train.grad_accum", accum);
  switchRow(form, QString(), {new QLabel(tr("Gradient accumulation")), accum});

  auto* gpus = new QSpinBox;
  gpus->setRange(1, 64);
  keys_->bind("dist.gpus", gpus);
  switchRow(form, switchGroup(form, tr("GPUs")), {gpus});
  auto* zero = check(tr("Shard optimizer state (ZeRO-1)"));
  zero->setProperty("onValue", "1");
  zero->setProperty("offValue", "0");
  keys_->bind("dist.zero", zero);
  switchRow(form, QString(), {zero});
}

void SwitchesBox::updateAvailability(const Config& config, int cudaDevices) {
  QStringList reasons;
  for (const char* key : {"speed.precision", "speed.attention", "speed.sdpa_backend", "speed.layers"}) {
    auto* combo = qobject_cast<QComboBox*>(keys_->widget(key));
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    for (int i = 0; i < combo->count(); ++i) {
      const QString value = combo->itemData(i).toString();
      // The current choice stays selectable even when it is a problem: the user must be able to leave it.
      const QString why = i == combo->currentIndex() ? QString() : reasonAgainst(config, key, value, cudaDevices);
      model->item(i)->setEnabled(why.isEmpty());
      const QString help = combo->itemData(i, kHelpRole).toString();
      combo->setItemData(i, why.isEmpty() ? help : help + tr("\n\nUnavailable: ") + why, Qt::ToolTipRole);
      if (!why.isEmpty()) reasons << why;  // the engine's line already names key=value
    }
  }
  for (const char* key :
       {"speed.fp8", "speed.cuda_graphs", "speed.fused_glue", "speed.fused_adamw", "speed.pin_memory", "speed.prefetch",
        "speed.activation_checkpointing", "model.tie_weights", "model.vocab_pad_multiple"}) {
    auto* box = qobject_cast<QCheckBox*>(keys_->widget(key));
    const QString on = box->property("onValue").isValid() ? box->property("onValue").toString() : "true";
    // A partly checked box (speed.pin_memory=auto) is not "on": turning it fully on may still be refused.
    const QString why = box->checkState() == Qt::Checked ? QString() : reasonAgainst(config, key, on, cudaDevices);
    box->setEnabled(why.isEmpty());
    box->setToolTip(box->property("tip").toString() + (why.isEmpty() ? QString() : tr("\n\nUnavailable: ") + why));
    if (!why.isEmpty()) reasons << why;
  }
  auto* gpus = qobject_cast<QSpinBox*>(keys_->widget("dist.gpus"));
  const QString why = gpus->value() > 1 ? QString() : reasonAgainst(config, "dist.gpus", "2", cudaDevices);
  const QString fewGpus =
      cudaDevices < 2 ? tr("DDP needs two or more GPUs; this machine has %1").arg(cudaDevices) : QString();
  const QString gpuReason = !why.isEmpty() ? why : fewGpus;
  gpus->setEnabled(gpuReason.isEmpty() || gpus->value() > 1);
  gpus->setToolTip(gpus->property("tip").toString() +
                   (gpuReason.isEmpty() ? QString() : tr("\n\nUnavailable: ") + gpuReason));
  if (!gpuReason.isEmpty() && gpus->value() == 1) reasons << gpuReason;
  reasons.removeDuplicates();
  unavailable_->setText(
      reasons.isEmpty()
          ? QString()
          : tr("Unavailable on %1:\n• %2").arg(QString::fromStdString(config.device), reasons.join("\n• ")));
}

QString SwitchesBox::unavailableText() const { return unavailable_->text(); }

}  // namespace tokamak::ui
