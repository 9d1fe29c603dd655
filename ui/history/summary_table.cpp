// SummaryTable (see summary_table.h): a stat picker over a metric × run table.
#include "ui/history/summary_table.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "engine/base/run/layer_metrics.h"
#include "engine/base/store/scoreboard.h"

namespace tokamak::ui {

namespace {
const char* const kStats[] = {"last", "min", "max", "best", "mean"};  // "mean" takes the K box
const char* const kSettingsKey = "compare/summaryStat";
}  // namespace

SummaryTable::SummaryTable(QWidget* parent) : QWidget(parent) {
  stat_ = new QComboBox(this);
  stat_->setObjectName(QStringLiteral("summaryStat"));
  stat_->addItems({tr("last value"), tr("min"), tr("max"), tr("best"), tr("mean of last")});
  stat_->setToolTip(tr("best: the lowest loss or time, the highest tok/s or MFU"));
  window_ = new QSpinBox(this);
  window_->setObjectName(QStringLiteral("summaryWindow"));
  window_->setRange(1, 1000000);
  window_->setValue(10);
  window_->setSuffix(tr(" reports"));
  table_ = new QTableWidget(this);
  table_->setObjectName(QStringLiteral("metricSummary"));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Each metric's"), this));
  controls->addWidget(stat_);
  controls->addWidget(window_);
  controls->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addWidget(table_, 1);
  setStat(QSettings("Tokamak", "Tokamak Studio").value(kSettingsKey, QStringLiteral("last")).toString());
  const auto changed = [this] {
    window_->setEnabled(stat_->currentIndex() == 4);
    QSettings("Tokamak", "Tokamak Studio").setValue(kSettingsKey, stat());
    rebuild();
  };
  connect(stat_, &QComboBox::currentIndexChanged, this, changed);
  connect(window_, &QSpinBox::valueChanged, this, changed);
}

bool SummaryTable::setStat(const QString& stat) {
  try {
    tokamak::check_metric_stat(stat.toStdString());
  } catch (const std::exception&) {
    return false;
  }
  const bool mean = stat.startsWith(QLatin1String("mean:"));
  if (mean) window_->setValue(stat.mid(5).toInt());
  int index = 4;
  for (int i = 0; i < 4; ++i)
    if (stat == QLatin1String(kStats[i])) index = i;
  stat_->setCurrentIndex(index);
  window_->setEnabled(mean);
  rebuild();
  return true;
}

QString SummaryTable::stat() const {
  const int i = stat_->currentIndex();
  return i == 4 ? QStringLiteral("mean:%1").arg(window_->value()) : QString::fromLatin1(kStats[i < 0 ? 0 : i]);
}

void SummaryTable::setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::MetricRow>>& metrics) {
  labels_ = labels;
  metrics_ = metrics;
  rebuild();
}

void SummaryTable::rebuild() {
  // Every key any run recorded, in the order first seen (tokens and wall time are positions, not metrics).
  std::vector<std::string> keys;
  for (const auto& run : metrics_)
    for (const tokamak::MetricRow& row : run)
      for (const tokamak::MetricValue& v : row.values)
        if (v.key != "tokens" && v.key != "wall_s" && !tokamak::is_layer_metric(v.key) &&
            std::find(keys.begin(), keys.end(), v.key) == keys.end())
          keys.push_back(v.key);
  const std::string stat = this->stat().toStdString();
  table_->clear();
  table_->setColumnCount(int(labels_.size()) + 1);
  table_->setHorizontalHeaderLabels(
      QStringList{tr("metric (%1)").arg(QString::fromStdString(tokamak::metric_stat_label(stat)))} + labels_);
  table_->setRowCount(int(keys.size()));
  for (int k = 0; k < int(keys.size()); ++k) {
    const std::string& key = keys[size_t(k)];
    table_->setItem(k, 0, new QTableWidgetItem(QString::fromStdString(key)));
    for (int r = 0; r < int(metrics_.size()); ++r) {
      std::vector<double> values;
      for (const tokamak::MetricRow& row : metrics_[size_t(r)]) values.push_back(row[key]);
      const double v = tokamak::summarize_metric(key, values, stat);
      auto* item = new QTableWidgetItem(std::isnan(v) ? QStringLiteral("-") : QString::number(v, 'g', 6));
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      table_->setItem(k, r + 1, item);
    }
  }
  table_->resizeColumnsToContents();
}

}  // namespace tokamak::ui
