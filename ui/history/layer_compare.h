// LayerCompare: the compare view's "Layers" tab — two of the compared runs' per-layer statistics as heatmaps side
// by side (layer_heatmap.h), one statistic for both, each run chosen in its own box. Runs that measured no layers
// (metrics.layers_every=-1, or older runs) are listed but draw nothing, and the tab says so.
#pragma once
#include <QPointer>
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
  // The ⤢ button ("Larger"): the same runs in a window of their own, nine tenths of the screen (the compare tab is a
  // strip of the runs page at 1366×768, too short for a model's forty rows). Returns the window's view; one window at a
  // time.
  LayerCompare* openWindow();

 private:
  void show(int side);
  void shareScale();
  QComboBox* stat_;
  QComboBox* runs_[2];
  LayerHeatmap* maps_[2];
  QLabel* note_;
  std::vector<std::vector<tokamak::MetricRow>> metrics_;
  QStringList labels_;
  QPointer<QWidget> window_;
};

}  // namespace tokamak::ui
