// LivePlots: the live-run page's grid of plots — train and validation loss, tok/s, MFU, memory (allocated,
// reserved, peak), learning rate, grad norm — plus one plot of any metric the run reports, chosen in a
// picker that lists every metric key seen so far (a metric added to the trainer appears there unedited) and,
// first, "step phases": each phase's ms per step over time, what that plot opens on when the run reports them,
// with the controls that apply to all of them: X axis (step, tokens, wall time), log Y, smoothing, and
// "follow" after a zoom. Beside them the step profile as a stacked bar (ms per step by phase, the mean over
// the reports after the first, as `runs compare` takes it). A run that measures its layers (metrics.layers_every)
// adds one picker entry per statistic ("layers: gradient RMS", …), drawn in the same place as a heatmap of layers
// × steps (layer_heatmap.h). Fed in batches by the run controller.
#pragma once
#include <QVector>
#include <QWidget>
#include <array>
#include <string>
#include <vector>

#include "engine/base/run/phases.h"
#include "engine/base/run/events.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QSlider;
class QStackedWidget;

namespace tokamak::ui {

class LayerHeatmap;
class MetricPlot;
class PhaseBars;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  explicit LivePlots(QWidget* parent = nullptr);

  void appendSteps(const std::vector<StepEvent>& steps);
  void appendEvals(const std::vector<EvalEvent>& evals);
  void flush();  // one batched push + one queued replot per plot
  // A pause in the run's history (a requeued Slurm job): every curve breaks after its last point.
  void addGap();
  // Loss spikes as marks on the loss plot (shown from the first); a rollback first drops every curve's points
  // after the step it went back to.
  void markSpikes(const std::vector<SpikeEvent>& spikes);
  void dropAfter(int64_t step);
  void clear();
  int spikeMarks() const;
  // fp16: a mark on the loss plot at each report whose count of steps the loss scale skipped went up.
  int scaleSkipMarks() const;

  QList<MetricPlot*> plots() const { return plots_; }
  MetricPlot* lossPlot() const { return loss_; }
  int trainPoints() const;  // points of the train-loss series
  int valPoints() const;
  MetricPlot* pickedPlot() const { return picked_; }
  QComboBox* metricPicker() const { return picker_; }
  PhaseBars* phaseBars() const { return phases_; }
  LayerHeatmap* layerHeatmap() const { return heatmap_; }
  bool heatmapShown() const;

 private:
  // Where a metric key goes among the default plots: which series, times what (MFU in %, bytes in MB).
  struct Route {
    std::string key;
    MetricPlot* plot;
    int series;
    double scale;
    bool positiveOnly;  // memory: 0 means "not measured here" (reserved on a CPU)
  };
  struct History {
    std::string key;
    QVector<double> step, tokens, wall, value;
    std::vector<size_t> routes;  // indices into routes_
    int pickedSeries = -1;       // the picked plot's series it feeds, -1: not drawn there
  };
  QGridLayout* buildGrid();
  void routeMetrics();
  MetricPlot* add(const QString& title, const QString& unit);
  void append(const std::string& key, double step, double tokens, double wall, double value);
  void showPicked();
  void autoPick();  // until the user picks: the phases, else the first key without a plot of its own
  void showPhases();
  void appendLayers(const StepEvent& e);  // a report's per-layer statistics: the heatmap, and its picker entries

  QComboBox* xAxis_;
  QComboBox* picker_;
  std::vector<Route> routes_;
  std::vector<History> history_;  // every key seen, in first-seen order: what the picker can replay
  std::string pickedKey_;

  QCheckBox* logY_;
  QSlider* smoothing_;
  QList<MetricPlot*> plots_;
  MetricPlot *loss_, *speed_, *mfu_, *memory_, *lr_, *gradNorm_, *picked_;
  int train_ = 0, val_ = 0, spikes_ = 0, scaleSkips_ = 0, pickedS_ = 0;
  double scaleSkipped_ = 0;  // the last report's scale_skipped_steps
  std::array<int, tokamak::kPhaseCount> phaseS_{};  // the picked plot's series of each phase
  bool userPicked_ = false;
  PhaseBars* phases_;
  LayerHeatmap* heatmap_;
  QStackedWidget* pickedStack_;  // the picked plot, or the heatmap
  std::array<std::vector<double>, tokamak::kPhaseCount> phaseValues_;  // each report's, in step order
  bool phasesChanged_ = false;
};

}  // namespace tokamak::ui
