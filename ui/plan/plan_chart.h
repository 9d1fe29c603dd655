// PlanChart: the Plan page's time against cost, one point per device that fits (hours on a log axis, dollars up).
// The devices worth renting — none both faster and cheaper — are named; they sit low and to the left.
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

#include "engine/base/plan/plan.h"

class QCustomPlot;

namespace tokamak::ui {

class PlanChart : public QWidget {
  Q_OBJECT
 public:
  explicit PlanChart(QWidget* parent = nullptr);
  // Rows that fit and have a price (this machine has none) become points, named by LABELS.
  void setRows(const std::vector<PlanRow>& rows, const std::vector<QString>& labels);
  int pointCount() const { return points_; }
  const QStringList& named() const { return named_; }  // the labelled points: the faster-and-cheaper front
  QCustomPlot* plot() const { return plot_; }

 private:
  QCustomPlot* plot_;
  int points_ = 0;
  QStringList named_;
};

}  // namespace tokamak::ui
