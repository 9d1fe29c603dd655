// ModelBox: preset or custom sizes, parameter count, memory estimate vs measured peak (see model_box.h).
#include "ui/setup/model_box.h"
#include "ui/common/qt_helpers.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <cmath>
#include <cstdlib>

#include "engine/base/config/config.h"
#include "engine/base/machine/precision_here.h"
#include "engine/base/plan/memory_estimate.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {

ModelBox::ModelBox(KeyBindings* keys, QWidget* parent) : QGroupBox(tr("Model"), parent), keys_(keys) {
  preset_ = new QComboBox;
  for (const std::string& p : model_presets()) preset_->addItem(QString::fromStdString(p), QString::fromStdString(p));
  layers_ = spin_box(1, 256);
  heads_ = spin_box(1, 256);
  width_ = spin_box(1, 16384);
  context_ = spin_box(2, 65536);
  params_ = new QLabel;
  params_->setObjectName("paramCount");
  estimate_ = new QLabel;
  estimate_->setObjectName("memoryEstimate");
  estimate_->setWordWrap(true);
  measured_ = new QLabel;
  measured_->setObjectName("measuredPeak");
  measured_->hide();
  weights_ = new QLabel;
  weights_->setObjectName("weightsFrom");
  weights_->setWordWrap(true);
  fromWeights_ = new QPushButton(tr("Start from weights…"));
  fromWeights_->setObjectName("startFromWeights");
  fromWeights_->setToolTip(
      tr("Fine-tune: start from GPT-2 weights in Hugging Face's format (a folder with config.json and "
         "model.safetensors, e.g. one exported by Tokamak or downloaded from the hub). The sizes above are set "
         "to the weights' own (model.init_from)."));
  randomInit_ = new QPushButton(tr("Random init"));
  randomInit_->setObjectName("randomInit");
  randomInit_->setToolTip(tr("Forget the weights: start from GPT-2's random initialisation"));
  connect(fromWeights_, &QPushButton::clicked, this, &ModelBox::startFromWeightsClicked);
  connect(randomInit_, &QPushButton::clicked, this, &ModelBox::randomInitClicked);
  auto* weightsRow = new QHBoxLayout;
  weightsRow->addWidget(weights_, 1);
  weightsRow->addWidget(fromWeights_);
  weightsRow->addWidget(randomInit_);
  showWeights({});
  keys->bind("model.preset", preset_);
  keys->bind("model.n_layer", layers_);
  keys->bind("model.n_head", heads_);
  keys->bind("model.n_embd", width_);
  keys->bind("model.context", context_);

  auto* form = new QFormLayout(this);
  form->addRow(tr("Preset"), preset_);
  form->addRow(tr("Layers"), layers_);
  form->addRow(tr("Heads"), heads_);
  form->addRow(tr("Width"), width_);
  form->addRow(tr("Context"), context_);
  form->addRow(tr("Weights"), weightsRow);
  form->addRow(tr("Parameters"), params_);
  form->addRow(tr("Memory"), estimate_);
  form->addRow(QString(), measured_);
  connect(preset_, &QComboBox::currentIndexChanged, this, &ModelBox::presetChanged);
}

void ModelBox::presetChanged() {
  const QString p = preset_->currentData().toString();
  if (p == "custom" || filling_) return;
  // A chosen preset fills in its sizes, so what the boxes show is what will be built.
  ModelConfig m;
  apply_model_preset(m, p.toStdString());
  filling_ = true;
  keys_->setValue("model.n_layer", QString::number(m.n_layer));
  keys_->setValue("model.n_head", QString::number(m.n_head));
  keys_->setValue("model.n_embd", QString::number(m.n_embd));
  keys_->setValue("model.context", QString::number(m.context));
  filling_ = false;
}

void ModelBox::showEstimate(const Config& config) {
  if (config.model.n_head < 1 || config.model.n_embd % config.model.n_head != 0) {
    params_->setText(tr("—"));
    estimate_->setText(tr("—"));
    return;
  }
  // `auto` as a run here would take it (the run resolves it again and records what it took).
  const MemoryEstimate m = estimate_memory(config, precision_here(config.speed.precision, config.device));
  params_->setText(tr("%1 (%L2)").arg(count_text(static_cast<double>(m.parameters))).arg(m.parameters));
  estimate_->setText(tr("≈ %1 per process").arg(data_size(m.total())));
  estimate_->setProperty("bytes", static_cast<qint64>(m.total()));  // showMeasuredPeak names the difference
  estimate_->setToolTip(tr("Weights %1 + AdamW states %2 + the larger of activations %3 + logits %4 (the start "
                           "of backward) and gradients %5 (its end)%6.\n"
                           "Activations per Korthikanti et al.: s·b·h·(34 + 5·a·s/h) bytes per layer in 16-bit; "
                           "fused attention drops the 5·a·s/h term, bf16 autocast keeps the LayerNorms' inputs in "
                           "fp32, checkpointing keeps only block inputs, fp32 doubles it.")
                            .arg(data_size(m.weights), data_size(m.optimizer), data_size(m.activations),
                                 data_size(m.logits), data_size(m.gradients),
                                 m.overhead > 0
                                     ? tr(" + %1 the GPU's allocator holds beside them").arg(data_size(m.overhead))
                                     : QString()) +
                        (m.optimizer_saved > 0 ? tr("\nZeRO-1: AdamW state sharded over the ranks, %1 less per "
                                                    "process")
                                                     .arg(data_size(m.optimizer_saved))
                                               : QString()));
}

void ModelBox::showMeasuredPeak(qint64 bytes, const QString& device) {
  measured_->setVisible(bytes > 0);
  const bool cpu = device.startsWith("cpu");
  // On a CPU the peak is the process's resident set (libraries and the tokenizer included), not just tensors.
  QString text = tr("last run measured %1 (%2)")
                     .arg(data_size(bytes), cpu ? tr("peak resident set of the process") : tr("peak allocated"));
  // The difference, named: what the estimate (weights, gradients, AdamW, activations, logits) leaves out.
  const qint64 estimate = estimate_->property("bytes").toLongLong();
  if (estimate > 0) {
    const qint64 diff = bytes - estimate;
    text += tr(": %1 %2 the estimate (%3%4%)")
                .arg(data_size(std::abs(diff)), diff >= 0 ? tr("over") : tr("under"), diff >= 0 ? "+" : "-")
                .arg(std::abs(100.0 * static_cast<double>(diff) / static_cast<double>(estimate)), 0, 'f', 0);
    if (diff > 0)
      text += cpu ? tr(" — the process itself: LibTorch's code, the dataset, the tokenizer and freed memory the "
                       "allocator keeps")
                  : tr(" — temporaries the estimate does not model (attention and loss buffers, kernel workspaces)");
  }
  measured_->setText(text);
  measured_->setWordWrap(true);
}

QString ModelBox::estimateText() const { return estimate_->text(); }

void ModelBox::showWeights(const QString& initFrom, qint64 fileParameters, qint64 modelParameters) {
  QString text = initFrom.isEmpty() ? tr("random") : QFileInfo(initFrom).fileName();
  if (!initFrom.isEmpty() && fileParameters >= 0) {
    text += fileParameters == modelParameters
                ? tr(": %1 parameters, as the model").arg(count_text(static_cast<double>(fileParameters)))
                : tr(": %1 parameters, but the model has %2")
                      .arg(count_text(static_cast<double>(fileParameters)),
                           count_text(static_cast<double>(modelParameters)));
  }
  weights_->setText(text);
  weights_->setToolTip(initFrom);
  randomInit_->setVisible(!initFrom.isEmpty());
}

QString ModelBox::weightsText() const { return weights_->text(); }

}  // namespace tokamak::ui
