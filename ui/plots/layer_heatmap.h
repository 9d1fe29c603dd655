// LayerHeatmap: a run's per-layer statistics (engine/base/run/layer_metrics.h) as a heatmap, layers × steps, one
// statistic at a time — the parameter groups (emb at the bottom, then each block's attention, MLP and norms, the
// head at the top) or the blocks for the activation RMS and attention entropy. The x axis is the step, as the other
// plots' default; a click on a cell shows its group, step and value under the map. Fed live, report by report
// (LivePlots), or with a stored run's whole history (CompareView, two side by side).
#pragma once
#include <QString>
#include <QWidget>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/run/metrics.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;

namespace tokamak {
struct MetricRow;
}

namespace tokamak::ui {

class LayerHeatmap : public QWidget {
  Q_OBJECT
 public:
  // With its own statistic picker, or without (LivePlots picks the statistic in its plot picker).
  explicit LayerHeatmap(bool ownPicker = true, QWidget* parent = nullptr);

  void append(int64_t step, const tokamak::Metrics& metrics);  // the layers' keys of one report; others ignored
  void setRows(const std::vector<tokamak::MetricRow>& rows);   // a stored run's history, replacing what was shown
  void clear();
  void setTitle(const QString& title);
  void setStat(const std::string& stat);  // "g_rms" (layer_stats()' ids); the picker follows
  std::string stat() const { return stat_; }
  bool hasData() const { return !steps_.empty(); }

  // The rows (groups, bottom to top) and columns (report steps) of the statistic shown.
  std::vector<std::string> groups() const;
  const std::vector<int64_t>& steps() const { return steps_; }
  // What a click on the cell of GROUP at STEP shows ("h3.attn · step 120 · gradient RMS 0.00123"); "" off the map.
  QString pick(const std::string& group, int64_t step);
  QString readout() const;
  // The smallest and largest value of the statistic shown; a colour scale set from outside (two maps compared on
  // one scale), or an empty range (lo >= hi) for the map's own.
  std::pair<double, double> valueRange() const;
  void setSharedRange(std::pair<double, double> range);

  QCustomPlot* plot() const { return plot_; }
  QComboBox* statPicker() const { return picker_; }

 private:
  void redraw();
  void clicked(double key, double value);

  QComboBox* picker_ = nullptr;
  QLabel* title_;
  QLabel* readout_;
  QCustomPlot* plot_;
  QCPColorMap* map_;
  QCPColorScale* scale_;
  std::string stat_ = "g_rms";
  std::vector<int64_t> steps_;  // every report step with layers, sorted
  // stat -> group -> step -> value
  std::map<std::string, std::map<std::string, std::map<int64_t, double>>> values_;
  std::vector<std::string> shownGroups_;
  int64_t cell_ = 1;  // steps per column: the smallest gap between reports
  std::pair<double, double> shared_{0, 0};
};

}  // namespace tokamak::ui
