// LivePlots: the live-run page's grid of plots — train and validation loss, tok/s, MFU, memory (allocated,
// reserved, peak), learning rate, grad norm — with the controls that apply to all of them: X axis (step,
// tokens, wall time), log Y, smoothing, and "follow" after a zoom. Fed in batches by the run controller.
#pragma once
#include <QWidget>
#include <vector>

#include "engine/train/events.h"

class QCheckBox;
class QComboBox;
class QSlider;

namespace tokamak::ui {

class MetricPlot;

class LivePlots : public QWidget {
  Q_OBJECT
 public:
  explicit LivePlots(QWidget* parent = nullptr);

  void appendSteps(const std::vector<StepEvent>& steps);
  void appendEvals(const std::vector<EvalEvent>& evals);
  void flush();  // one batched push + one queued replot per plot
  void clear();

  QList<MetricPlot*> plots() const { return plots_; }
  MetricPlot* lossPlot() const { return loss_; }
  int trainPoints() const;  // points of the train-loss series
  int valPoints() const;

 private:
  MetricPlot* add(const QString& title, const QString& unit);

  QComboBox* xAxis_;
  QCheckBox* logY_;
  QSlider* smoothing_;
  QList<MetricPlot*> plots_;
  MetricPlot *loss_, *speed_, *mfu_, *memory_, *lr_, *gradNorm_;
  int train_ = 0, val_ = 0, tokS_ = 0, mfuS_ = 0, alloc_ = 0, reserved_ = 0, peak_ = 0, lrS_ = 0, normS_ = 0;
};

}  // namespace tokamak::ui
