// MetricPlot: one live plot (QCustomPlot) of one or more series, e.g. train and validation loss. Points are
// buffered and pushed to the graphs in one batch per flush(); each series draws its raw curve lighter and an
// EMA-smoothed curve over it, so smoothing never hides the data. X by step, tokens or wall time; log Y;
// wheel zoom and drag pan (a double click returns to following the data); hover shows the values. With more
// than one series shown, the legend is a strip under the title, never over the curves.
#pragma once
#include <QColor>
#include <QString>
#include <QVector>

#include "ui/plots/qcp.h"

namespace tokamak::ui {

enum class XAxis { Step, Tokens, WallTime };

class MetricPlot : public QCustomPlot {
  Q_OBJECT
 public:
  MetricPlot(const QString& title, const QString& unit, QWidget* parent = nullptr);

  int addSeries(const QString& name, const QColor& color);
  void renameSeries(int series, const QString& name);
  // A hidden series draws nothing and has no legend entry (the picked plot shows one key or the phases).
  void setSeriesShown(int series, bool shown);
  // Points without a line and without smoothing (the loss spikes on the loss plot); kept by dropAfter().
  void setSeriesMarkers(int series);
  // Every other series loses its points after STEP (a rollback: those steps are trained again).
  void dropAfter(double step);
  // The Y axis starts at 0 while following the data: a rate or a size read against its own size, not a
  // ±0.5 tok/s wobble magnified to the full height.
  void setYFromZero(bool fromZero);
  void setTitle(const QString& title);
  void append(int series, double step, double tokens, double wallSeconds, double value);
  // Breaks every series' line after its last point (a NaN point: QCustomPlot draws no line through it), e.g.
  // where a requeued Slurm job's run paused.
  void addGap();
  // Pushes what was appended since the last flush to the graphs and queues one replot.
  void flush();
  void clear();

  void setXAxis(XAxis axis);
  void setLogY(bool log);
  void setSmoothing(double weight);  // 0 = off … 0.99 = very smooth (EMA weight of the past)
  void followData();                 // back to auto-range after a zoom or pan

  int pointCount(int series) const;  // data points, gaps not counted
  int shownPointCount() const;       // of every shown series
  int gapCount(int series) const;
  QString title() const { return title_; }
  QString readoutAt(double key) const;  // what the hover tooltip shows at that x

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Series {
    QString name;
    QColor color;
    QVector<double> step, tokens, wall, value;
    int flushed = 0;  // points already in the graphs
    bool shown = true;
    bool markers = false;
    double ema = 0;
    QCPGraph* raw = nullptr;
    QCPGraph* smooth = nullptr;
  };
  const QVector<double>& keys(const Series& s) const;
  void rebuild();
  void fitRange();                    // rescale to the data (from 0 with setYFromZero)
  void fitTicks();                    // as many Y ticks as the height has room for
  void updateLegend();                // under the title with two or more shown series, else gone
  const Series* hoverSeries() const;  // the first shown series with points
  void applyPalette();
  void styleSeries(Series& s);

  QString title_, unit_;
  QVector<Series> series_;
  XAxis xAxis_ = XAxis::Step;
  double smoothing_ = 0.6;
  bool follow_ = true;
  bool logY_ = false;
  bool fromZero_ = false;
  QCPItemTracer* tracer_ = nullptr;
  QCPTextElement* titleElement_ = nullptr;
};

}  // namespace tokamak::ui
