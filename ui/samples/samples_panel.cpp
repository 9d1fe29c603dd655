// SamplesPanel: samples as they arrive, and "sample now" from the latest checkpoint (see samples_panel.h).
#include "ui/samples/samples_panel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QVBoxLayout>

#include "ui/live/sample_process.h"

namespace tokamak::ui {

SamplesPanel::SamplesPanel(QWidget* parent) : QWidget(parent) {
  view_ = new QPlainTextEdit;
  view_->setObjectName("samples");
  view_->setReadOnly(true);
  view_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  view_->setMaximumBlockCount(20000);  // a long run keeps the newest samples, not all of them
  prompt_ = new QLineEdit(tr("The"));
  prompt_->setObjectName("samplePrompt");
  prompt_->setPlaceholderText(tr("prompt"));
  tokens_ = new QSpinBox;
  tokens_->setRange(1, 1024);
  tokens_->setValue(48);
  tokens_->setSuffix(tr(" tokens"));
  sampleNow_ = new QPushButton(tr("Sample now"));
  sampleNow_->setObjectName("sampleNow");
  job_ = new SampleProcess(this);

  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Prompt")));
  row->addWidget(prompt_, 1);
  row->addWidget(tokens_);
  row->addWidget(sampleNow_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(view_, 1);
  layout->addLayout(row);

  connect(sampleNow_, &QPushButton::clicked, this, &SamplesPanel::sampleNow);
  connect(prompt_, &QLineEdit::returnPressed, this, &SamplesPanel::sampleNow);
  connect(job_, &SampleProcess::finished, this, [this](qint64 step, const QString& text, const QString& error) {
    sampleNow_->setEnabled(!checkpoint_.isEmpty());
    sampleNow_->setText(tr("Sample now"));
    if (!error.isEmpty()) append(step, error, tr("sample now failed"));
    else append(step, text, tr("sample now, from checkpoint"));
  });
  setCheckpoint({});
}

void SamplesPanel::appendSamples(const std::vector<SampleEvent>& samples) {
  for (const SampleEvent& s : samples) append(s.step, QString::fromStdString(s.text), tr("during training"));
}

void SamplesPanel::append(qint64 step, const QString& text, const QString& origin) {
  QScrollBar* bar = view_->verticalScrollBar();
  const bool atEnd = bar->value() == bar->maximum();
  view_->appendPlainText(tr("── step %1 · %2 ──").arg(step).arg(origin));
  view_->appendPlainText(text.trimmed() + "\n");
  ++count_;
  if (atEnd) bar->setValue(bar->maximum());  // follow new samples unless the user scrolled up to read
}

void SamplesPanel::setCheckpoint(const QString& path, qint64 step) {
  checkpoint_ = path;
  checkpointStep_ = step;
  sampleNow_->setEnabled(!path.isEmpty() && !job_->isRunning());
  sampleNow_->setToolTip(path.isEmpty() ? tr("Available once the run has written a checkpoint "
                                             "(set “Checkpoint every”, or stop the run)")
                                        : tr("Generates from %1 in a process of its own").arg(path));
}

void SamplesPanel::setHostRun(bool on) {
  hostRun_ = on;
  if (!on) return setCheckpoint(checkpoint_, checkpointStep_);
  sampleNow_->setEnabled(true);
  sampleNow_->setToolTip(tr("Asks the run on its host for a sample at its next step (with the run's own prompt)"));
}

void SamplesPanel::clear() {
  view_->clear();
  count_ = 0;
  setCheckpoint({});
}

bool SamplesPanel::isSampling() const { return job_->isRunning(); }

QString SamplesPanel::text() const { return view_->toPlainText(); }

void SamplesPanel::sampleNow() {
  if (hostRun_) return Q_EMIT sampleRequested();
  if (checkpoint_.isEmpty() || job_->isRunning()) return;
  SampleNowRequest r;
  r.checkpoint = checkpoint_;
  r.step = checkpointStep_;
  r.prompt = prompt_->text();
  r.tokens = tokens_->value();
  if (job_->start(r) && job_->isRunning()) {
    sampleNow_->setEnabled(false);
    sampleNow_->setText(tr("Sampling…"));
  }
}

}  // namespace tokamak::ui
