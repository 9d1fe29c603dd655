// SampleCompare (see sample_compare.h): a step box over a table, rows step / prompt / text, a column per run.
#include "ui/runs/sample_compare.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cstdlib>
#include <limits>

namespace tokamak::ui {

const tokamak::SampleRow* nearestSample(const std::vector<tokamak::SampleRow>& samples, qint64 step) {
  const tokamak::SampleRow* best = nullptr;
  for (const tokamak::SampleRow& s : samples)
    if (!best || std::llabs(s.step - step) < std::llabs(best->step - step)) best = &s;
  return best;
}

SampleCompare::SampleCompare(QWidget* parent) : QWidget(parent) {
  step_ = new QSpinBox(this);
  step_->setObjectName(QStringLiteral("sampleStep"));
  step_->setRange(0, std::numeric_limits<int>::max());
  step_->setSpecialValueText(tr("last"));  // 0: each run's last sample
  step_->setToolTip(tr("Each run shows its sample nearest this step"));
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("sampleTable"));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setWordWrap(true);
  table_->setRowCount(3);
  table_->setVerticalHeaderLabels({tr("Step"), tr("Prompt"), tr("Sample")});
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Samples at step"), this));
  controls->addWidget(step_);
  controls->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addWidget(table_, 1);
  connect(step_, &QSpinBox::valueChanged, this, [this] { rebuild(); });
}

void SampleCompare::setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::SampleRow>>& samples) {
  labels_ = labels;
  samples_ = samples;
  rebuild();
}

void SampleCompare::setStep(qint64 step) { step_->setValue(int(step)); }

void SampleCompare::rebuild() {
  table_->setColumnCount(int(labels_.size()));
  table_->setHorizontalHeaderLabels(labels_);
  const qint64 step = step_->value() > 0 ? step_->value() : std::numeric_limits<qint64>::max();
  for (int r = 0; r < int(samples_.size()); ++r) {
    const tokamak::SampleRow* s = nearestSample(samples_[size_t(r)], step);
    table_->setItem(0, r, new QTableWidgetItem(s ? QString::number(s->step) : QStringLiteral("-")));
    table_->setItem(1, r, new QTableWidgetItem(s ? QString::fromStdString(s->prompt) : QString()));
    table_->setItem(2, r, new QTableWidgetItem(s ? QString::fromStdString(s->text) : tr("no samples")));
  }
  table_->resizeRowsToContents();
}

}  // namespace tokamak::ui
