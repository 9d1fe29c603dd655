// SwitchesBox: grouped speed-up switches with the write-ups' numbers as tooltips (see switches_box.h).
#include "ui/setup/switches_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <algorithm>
#include <iterator>

#include "engine/config/config.h"
#include "engine/util/error.h"
#include "ui/setup/key_bindings.h"

namespace tokamak::ui {
namespace {

struct Choice {
  const char* value;
  const char* tip;
};

const Choice kPrecision[] = {
    {"fp32", "Plain fp32 everywhere: the write-ups' baseline (A100: 12.5K tok/s)."},
    {"tf32", "TF32 tensor cores for fp32 matmuls (CUDA). A100: 12.5K → 27.6K tok/s."},
    {"bf16", "bf16 autocast with fp32 master weights. A100: +60% tok/s and half the activation memory."},
    {"bf16-pure", "The whole model, its gradients and AdamW state in bf16: the least memory."},
    {"fp16", "fp16 autocast with loss scaling (GradScaler), for GPUs without bf16 (CUDA)."},
};
const Choice kAttention[] = {
    {"buffered-mask", "GPT-2's original attention with a stored T×T causal-mask buffer."},
    {"naive", "Causal mask made on the fly: no stored T×T buffer (saves memory at long context)."},
    {"sdpa", "Fused attention (scaled_dot_product_attention; flash attention on GPUs): O(T) memory. "
             "A100: 55K → 92K tok/s, memory halved."},
};
const Choice kLayers[] = {
    {"scratch", "Hand-written LayerNorm and GELU from many small elementwise ops."},
    {"native", "The library's LayerNorm and GELU kernels. A100: 45K → 55K tok/s."},
    {"fused", "Tokamak's CUDA kernels in place of torch.compile: fused residual+LayerNorm, bias+GELU and a "
              "classifier that never stores fp32 logits (compile measured A100: 92K → 112K tok/s)."},
};

QComboBox* choices(const Choice* list, int n) {
  auto* c = new QComboBox;
  for (int i = 0; i < n; ++i) {
    c->addItem(list[i].value, list[i].value);
    c->setItemData(i, QString(list[i].tip), Qt::ToolTipRole);
  }
  return c;
}

QCheckBox* check(const QString& text, const QString& tip) {
  auto* b = new QCheckBox(text);
  b->setToolTip(tip);
  b->setProperty("tip", tip);
  return b;
}

// The problems that turning `key` to `value` adds to `config`: the reason it cannot be used here.
QString reasonAgainst(const Config& config, const QString& key, const QString& value, int cudaDevices) {
  Config on = config;
  try {
    set_key(on, key.toStdString(), value.toStdString());
  } catch (const Error& e) {
    return QString::fromStdString(e.message());
  }
  const auto before = config_problems(config, cudaDevices);
  for (const std::string& p : config_problems(on, cudaDevices))
    if (std::find(before.begin(), before.end(), p) == before.end()) return QString::fromStdString(p);
  return {};
}

}  // namespace

SwitchesBox::SwitchesBox(KeyBindings* keys, QWidget* parent) : QWidget(parent), keys_(keys) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto group = [&](const QString& title) {
    auto* g = new QGroupBox(title);
    auto* form = new QFormLayout(g);
    layout->addWidget(g);
    return form;
  };

  QFormLayout* precision = group(tr("Precision"));
  auto* prec = choices(kPrecision, std::size(kPrecision));
  prec->setToolTip(tr("Number format of matmuls, activations and weights"));
  keys->bind("opt.precision", prec);
  precision->addRow(tr("Precision"), prec);

  QFormLayout* attention = group(tr("Attention"));
  auto* attn = choices(kAttention, std::size(kAttention));
  attn->setToolTip(tr("How attention is computed; sdpa never stores the T×T scores"));
  keys->bind("opt.attention", attn);
  attention->addRow(tr("Attention"), attn);

  QFormLayout* kernels = group(tr("Kernels"));
  auto* layers = choices(kLayers, std::size(kLayers));
  layers->setToolTip(tr("Which kernels compute LayerNorm, GELU and the classifier"));
  keys->bind("opt.layers", layers);
  kernels->addRow(tr("Layers"), layers);
  auto* graphs = check(tr("CUDA graphs"), tr("Capture the whole training step once and replay it: no per-kernel "
                                             "launch overhead or host gaps (CUDA)."));
  keys->bind("opt.cuda_graphs", graphs);
  kernels->addRow(graphs);
  auto* pad = check(tr("Pad vocabulary to 64"), tr("50257 → 50304 embedding rows (a multiple of 64) so matmuls hit "
                                                   "fast tile sizes; padded logits are masked. A100: 112K → 127K tok/s."));
  pad->setProperty("onValue", "64");
  pad->setProperty("offValue", "1");
  keys->bind("model.vocab_pad_multiple", pad);
  kernels->addRow(pad);

  QFormLayout* optimizer = group(tr("Optimizer"));
  auto* fused = check(tr("Fused AdamW"), tr("One multi-tensor kernel for the whole optimizer step instead of a loop "
                                            "over parameters. H100: 55K → 79K tok/s at batch 1."));
  keys->bind("opt.fused_adamw", fused);
  optimizer->addRow(fused);

  QFormLayout* data = group(tr("Data"));
  auto* pin = check(tr("Pinned memory, non-blocking copies"),
                    tr("Page-locked batches copied to the GPU while it computes (CUDA). "
                       "Reported: execution time down more than 25%."));
  keys->bind("opt.pin_memory", pin);
  data->addRow(pin);
  auto* prefetch = check(tr("Prefetch the next batch"), tr("Prepare the next batch on a background thread while "
                                                           "the step runs, so the device never waits for data."));
  keys->bind("opt.prefetch", prefetch);
  data->addRow(prefetch);

  QFormLayout* memory = group(tr("Memory"));
  auto* ckpt = check(tr("Activation checkpointing"), tr("Recompute each block in backward instead of keeping its "
                                                        "activations: memory ÷2 for about +25% time."));
  keys->bind("opt.activation_checkpointing", ckpt);
  memory->addRow(ckpt);
  auto* tie = check(tr("Tie weights"), tr("The output layer shares the token embedding: −38M parameters at 124M."));
  keys->bind("model.tie_weights", tie);
  memory->addRow(tie);
  auto* accum = new QSpinBox;
  accum->setRange(1, 4096);
  accum->setToolTip(tr("Micro-batches per optimizer step: a large effective batch in small memory "
                       "(activation memory ÷ accumulation steps)."));
  keys->bind("train.grad_accum", accum);
  memory->addRow(tr("Gradient accumulation"), accum);

  QFormLayout* multi = group(tr("Multi-GPU"));
  auto* gpus = new QSpinBox;
  gpus->setRange(1, 64);
  gpus->setToolTip(tr("Data parallel: one process per GPU, gradients all-reduced over NCCL (DDP). "
                      "Reported: 8×H100 at 3.05M tok/s."));
  gpus->setProperty("tip", gpus->toolTip());
  keys->bind("dist.gpus", gpus);
  multi->addRow(tr("GPUs"), gpus);

  unavailable_ = new QLabel;
  unavailable_->setObjectName("unavailableSwitches");
  unavailable_->setWordWrap(true);
  layout->addWidget(unavailable_);
}

void SwitchesBox::updateAvailability(const Config& config, int cudaDevices) {
  QStringList reasons;
  for (const char* key : {"opt.precision", "opt.attention", "opt.layers"}) {
    auto* combo = qobject_cast<QComboBox*>(keys_->widget(key));
    auto* model = qobject_cast<QStandardItemModel*>(combo->model());
    for (int i = 0; i < combo->count(); ++i) {
      const QString value = combo->itemData(i).toString();
      // The current choice stays selectable even when it is a problem: the user must be able to leave it.
      const QString why = i == combo->currentIndex() ? QString() : reasonAgainst(config, key, value, cudaDevices);
      model->item(i)->setEnabled(why.isEmpty());
      if (!why.isEmpty()) reasons << why;  // the engine's line already names key=value
    }
  }
  for (const char* key : {"opt.cuda_graphs", "opt.fused_adamw", "opt.pin_memory", "opt.prefetch",
                          "opt.activation_checkpointing", "model.tie_weights", "model.vocab_pad_multiple"}) {
    auto* box = qobject_cast<QCheckBox*>(keys_->widget(key));
    const QString on = box->property("onValue").isValid() ? box->property("onValue").toString() : "true";
    const QString why = box->isChecked() ? QString() : reasonAgainst(config, key, on, cudaDevices);
    box->setEnabled(why.isEmpty());
    box->setToolTip(box->property("tip").toString() + (why.isEmpty() ? QString() : tr("\n\nUnavailable: ") + why));
    if (!why.isEmpty()) reasons << why;
  }
  auto* gpus = qobject_cast<QSpinBox*>(keys_->widget("dist.gpus"));
  const QString why = gpus->value() > 1 ? QString() : reasonAgainst(config, "dist.gpus", "2", cudaDevices);
  const QString fewGpus = cudaDevices < 2 ? tr("DDP needs two or more GPUs; this machine has %1").arg(cudaDevices)
                                          : QString();
  const QString gpuReason = !why.isEmpty() ? why : fewGpus;
  gpus->setEnabled(gpuReason.isEmpty() || gpus->value() > 1);
  gpus->setToolTip(gpus->property("tip").toString() + (gpuReason.isEmpty() ? QString() : tr("\n\nUnavailable: ") + gpuReason));
  if (!gpuReason.isEmpty() && gpus->value() == 1) reasons << gpuReason;
  reasons.removeDuplicates();
  unavailable_->setText(reasons.isEmpty() ? QString()
                                          : tr("Unavailable on %1:\n• %2").arg(QString::fromStdString(config.device),
                                                                               reasons.join("\n• ")));
}

QString SwitchesBox::unavailableText() const { return unavailable_->text(); }

}  // namespace tokamak::ui
