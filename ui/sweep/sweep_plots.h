// The sweep view's plots (QCustomPlot): the metric against each swept key, one small plot per key (a log
// axis where the key was swept on a log range, categories for a choice such as optimizer.name; one series
// per value of the sweep's choice key, its best trial ringed, so "the best lr for each optimizer" reads off
// the plot), and parallel coordinates over the swept keys and the metric, each trial a line coloured by its
// metric. Each trial is drawn at its highest rung (the point the ranked table shows).
#pragma once
#include <QList>
#include <QWidget>

#include "ui/sweep/sweep_results.h"

class QCPColorGradient;
class QCPRange;
class QCustomPlot;
class QGridLayout;

namespace tokamak::ui {

class SweepKeyPlots : public QWidget {
  Q_OBJECT
 public:
  explicit SweepKeyPlots(QWidget* parent = nullptr);
  void setResults(const SweepResults& results);
  QList<QCustomPlot*> plots() const { return plots_; }  // one per swept key, in the file's order
  // Trials drawn on plot `key` (each once, best rings not counted).
  int pointCount(int key) const;

 private:
  void rebuildPlots(const SweepResults& s);

  QGridLayout* grid_;
  QList<QCustomPlot*> plots_;
  QList<int> points_;
  QStringList shape_;  // the keys and colour key the plots were built for
};

class ParallelCoordinates : public QWidget {
  Q_OBJECT
 public:
  explicit ParallelCoordinates(QWidget* parent = nullptr);
  void setResults(const SweepResults& results);
  QCustomPlot* plot() const { return plot_; }
  int lineCount() const { return lines_; }  // trials drawn (one line each)
  QStringList axisLabels() const;           // the axes, left to right: the swept keys, then the metric

 private:
  void drawAxes(const SweepResults& s, const QList<double>& lo, const QList<double>& hi);
  void showMetricScale(const SweepResults& s, const QCPColorGradient& gradient, const QCPRange& metricRange);

  QCustomPlot* plot_;
  int lines_ = 0;
};

}  // namespace tokamak::ui
