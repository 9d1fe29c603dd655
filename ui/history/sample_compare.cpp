// SampleCompare (see sample_compare.h): a step box over a table, rows step / prompt / text, a column per run.
#include "ui/history/sample_compare.h"

#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cstdlib>
#include <limits>

#include "ui/history/flow_row.h"

namespace tokamak::ui {

const tokamak::SampleRow* nearestSample(const std::vector<tokamak::SampleRow>& samples, qint64 step,
                                        const std::string* prompt) {
  const tokamak::SampleRow* best = nullptr;
  for (const tokamak::SampleRow& s : samples)
    if (prompt && s.prompt != *prompt) continue;
    else if (!best || std::llabs(s.step - step) < std::llabs(best->step - step)) best = &s;
  return best;
}

SampleCompare::SampleCompare(QWidget* parent) : QWidget(parent) {
  step_ = new QSpinBox(this);
  step_->setObjectName(QStringLiteral("sampleStep"));
  step_->setRange(0, std::numeric_limits<int>::max());
  step_->setSpecialValueText(tr("last"));  // 0: each run's last sample
  step_->setToolTip(tr("Each run shows its sample nearest this step"));
  prompt_ = new QComboBox(this);
  prompt_->setObjectName(QStringLiteral("samplePrompt"));
  prompt_->setMinimumContentsLength(16);
  prompt_->setToolTip(tr("Only samples written from this prompt"));
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("sampleTable"));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(true);
  table_->setRowCount(3);
  table_->setVerticalHeaderLabels({tr("Step"), tr("Prompt"), tr("Sample")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  // The two choices wrap under each other in a narrow pane: on one line they set the runs page's least width
  // past what a 1366-pixel screen leaves beside a two-column setup.
  auto* controls = new FlowRow;
  controls->addWidget(labelled(tr("Samples at step"), step_));
  QWidget* from = labelled(tr("from"), prompt_);
  from->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  controls->addWidget(from);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addWidget(table_, 1);
  connect(step_, &QSpinBox::valueChanged, this, [this] { rebuild(); });
  connect(prompt_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
}

QStringList SampleCompare::prompts() const {
  QStringList seen;
  for (const auto& run : samples_)
    for (const tokamak::SampleRow& s : run)
      if (!seen.contains(QString::fromStdString(s.prompt))) seen << QString::fromStdString(s.prompt);
  return seen;
}

bool SampleCompare::setPrompt(const QString& prompt) {
  if (prompt.isEmpty()) return prompt_->setCurrentIndex(0), true;
  const int i = prompts().indexOf(prompt);
  if (i < 0) return false;
  prompt_->setCurrentIndex(i + 1);
  return true;
}

void SampleCompare::setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::SampleRow>>& samples) {
  labels_ = labels;
  samples_ = samples;
  // Keep the chosen prompt when the runs still sampled from it.
  const QString chosen = prompt_->currentIndex() > 0 ? prompt_->currentData().toString() : QString();
  {
    QSignalBlocker block(prompt_);
    prompt_->clear();
    prompt_->addItem(tr("any prompt"));
    for (const QString& p : prompts()) prompt_->addItem(p.isEmpty() ? tr("(no prompt)") : p, p);
    const int i = chosen.isEmpty() ? 0 : prompt_->findData(chosen);
    prompt_->setCurrentIndex(i < 0 ? 0 : i);
  }
  rebuild();
}

void SampleCompare::setStep(qint64 step) { step_->setValue(int(step)); }

void SampleCompare::rebuild() {
  table_->setColumnCount(int(labels_.size()));
  table_->setHorizontalHeaderLabels(labels_);
  const qint64 step = step_->value() > 0 ? step_->value() : std::numeric_limits<qint64>::max();
  const std::string prompt = prompt_->currentData().toString().toStdString();
  for (int r = 0; r < int(samples_.size()); ++r) {
    const tokamak::SampleRow* s =
        nearestSample(samples_[size_t(r)], step, prompt_->currentIndex() > 0 ? &prompt : nullptr);
    table_->setItem(0, r, new QTableWidgetItem(s ? QString::number(s->step) : QStringLiteral("-")));
    table_->setItem(1, r, new QTableWidgetItem(s ? QString::fromStdString(s->prompt) : QString()));
    table_->setItem(2, r, new QTableWidgetItem(s ? QString::fromStdString(s->text) : tr("no samples")));
  }
  table_->resizeRowsToContents();
}

}  // namespace tokamak::ui
