// LayerCompare: the compare view's "Layers" tab — two of the compared runs' per-layer statistics as heatmaps side
// by side (layer_heatmap.h), one statistic for both, each run chosen in its own box. Runs that measured no layers
// (metrics.layers_every=-1, or older runs) are listed but draw nothing, and the tab says so.
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

#include "engine/base/store/run_store.h"

class QComboBox;
class QLabel;

namespace tokamak::ui {

class LayerHeatmap;

class LayerCompare : public QWidget {
  Q_OBJECT
 public:
  explicit LayerCompare(QWidget* parent = nullptr);
  void setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::MetricRow>>& metrics);

  LayerHeatmap* heatmap(int side) const { return maps_[side]; }  // 0 left, 1 right
  QComboBox* runBox(int side) const { return runs_[side]; }
  QComboBox* statPicker() const { return stat_; }
  QString note() const;

 private:
  void show(int side);
  QComboBox* stat_;
  QComboBox* runs_[2];
  LayerHeatmap* maps_[2];
  QLabel* note_;
  std::vector<std::vector<tokamak::MetricRow>> metrics_;
};

}  // namespace tokamak::ui
