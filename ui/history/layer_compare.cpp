// LayerCompare (see layer_compare.h).
#include "ui/history/layer_compare.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include "engine/base/run/layer_metrics.h"
#include "ui/plots/layer_heatmap.h"

namespace tokamak::ui {
namespace {

bool measuredLayers(const std::vector<tokamak::MetricRow>& rows) {
  for (const tokamak::MetricRow& r : rows)
    for (const tokamak::MetricValue& v : r.values)
      if (tokamak::is_layer_metric(v.key)) return true;
  return false;
}

}  // namespace

LayerCompare::LayerCompare(QWidget* parent) : QWidget(parent) {
  setObjectName("layerCompare");
  stat_ = new QComboBox;
  stat_->setObjectName("layerCompareStat");
  for (const tokamak::LayerStat& s : tokamak::layer_stats()) {
    stat_->addItem(tr(s.label), QString(s.id));
    stat_->setItemData(stat_->count() - 1, tr(s.help), Qt::ToolTipRole);
  }
  stat_->setCurrentIndex(stat_->findData(QStringLiteral("g_rms")));
  note_ = new QLabel;
  note_->setWordWrap(true);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Statistic")));
  top->addWidget(stat_);
  top->addStretch(1);
  auto* grid = new QGridLayout;
  for (int side = 0; side < 2; ++side) {
    runs_[side] = new QComboBox;
    runs_[side]->setObjectName(side == 0 ? "layerRunLeft" : "layerRunRight");
    runs_[side]->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    runs_[side]->setMinimumContentsLength(12);
    maps_[side] = new LayerHeatmap(/*ownPicker=*/false);
    grid->addWidget(runs_[side], 0, side);
    grid->addWidget(maps_[side], 1, side);
    connect(runs_[side], &QComboBox::currentIndexChanged, this, [this, side] { show(side); });
  }
  grid->setRowStretch(1, 1);
  connect(stat_, &QComboBox::currentIndexChanged, this, [this] {
    for (LayerHeatmap* m : maps_) m->setStat(stat_->currentData().toString().toStdString());
  });
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(note_);
  layout->addLayout(grid, 1);
}

void LayerCompare::setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::MetricRow>>& metrics) {
  metrics_ = metrics;
  // The first two runs that measured their layers, else the first two.
  std::vector<int> measured;
  for (size_t i = 0; i < metrics_.size(); ++i)
    if (measuredLayers(metrics_[i])) measured.push_back(int(i));
  note_->setText(measured.empty() && !labels.isEmpty()
                     ? tr("None of these runs measured its layers: train with metrics.layers_every=0 (the default) "
                          "to see them here.")
                     : QString());
  note_->setVisible(!note_->text().isEmpty());
  for (int side = 0; side < 2; ++side) {
    const QSignalBlocker quiet(runs_[side]);
    runs_[side]->clear();
    runs_[side]->addItems(labels);
    const int pick = side < int(measured.size()) ? measured[size_t(side)] : std::min(side, int(labels.size()) - 1);
    runs_[side]->setCurrentIndex(pick);
    show(side);
  }
}

void LayerCompare::show(int side) {
  const int run = runs_[side]->currentIndex();
  maps_[side]->setStat(stat_->currentData().toString().toStdString());
  if (run < 0 || size_t(run) >= metrics_.size()) {
    maps_[side]->clear();
    maps_[side]->setTitle(QString());
    return;
  }
  maps_[side]->setRows(metrics_[size_t(run)]);
  maps_[side]->setTitle(maps_[side]->hasData() ? runs_[side]->currentText()
                                               : tr("%1: no layers measured").arg(runs_[side]->currentText()));
}

QString LayerCompare::note() const { return note_->text(); }

}  // namespace tokamak::ui
