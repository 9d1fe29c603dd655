// The sweep view's plots (see sweep_plots.h).
#include "ui/sweep/sweep_plots.h"

#include <QGridLayout>
#include <QVBoxLayout>
#include <cmath>

#include "engine/fleet/queue/sweep.h"
#include "ui/plots/qcp.h"
#include "ui/history/run_colors.h"

namespace tokamak::ui {
namespace {

QString shortKey(const QString& key) { return QString::fromStdString(swept_key_label(key.toStdString())); }

// The x of a trial on a key's plot: the value, or the category's index for a choice.
double xOf(const SweptKey& k, const QVariant& v) {
  if (k.choice) return k.categories.indexOf(v.toString());
  return v.toDouble();
}

QString metricLabel(const SweepResults& s) {
  return s.metric + (s.maximize ? QObject::tr(" (higher is better)") : QObject::tr(" (lower is better)"));
}

// The legend in a row of its own above the plot, so it never covers a point.
void legendAbove(QCustomPlot* plot) {
  plot->legend->setVisible(true);
  plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setBrush(Qt::NoBrush);
  QFont f = plot->legend->font();
  f.setPointSizeF(f.pointSizeF() * 0.85);
  plot->legend->setFont(f);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);
}

QCPColorGradient metricGradient() {
  // Viridis' ends and middle: ordered in lightness, readable in grey and by most colour-blind readers.
  QCPColorGradient g;
  g.clearColorStops();
  g.setColorStopAt(0, QColor(0x44, 0x01, 0x54));
  g.setColorStopAt(0.5, QColor(0x21, 0x91, 0x8c));
  g.setColorStopAt(1, QColor(0xfd, 0xe7, 0x25));
  return g;
}

// The key's axis: its categories, a log scale, or a linear one, over the values drawn (LO..HI).
void scaleKeyAxis(QCustomPlot* plot, const SweptKey& key, double lo, double hi) {
  if (key.choice) {
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int c = 0; c < key.categories.size(); ++c) ticker->addTick(c, key.categories[c]);
    plot->xAxis->setTicker(ticker);
    plot->xAxis->setScaleType(QCPAxis::stLinear);
    plot->xAxis->setRange(-0.5, key.categories.size() - 0.5);
  } else if (key.log) {
    plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    plot->xAxis->setNumberFormat(QStringLiteral("eb"));
    plot->xAxis->setNumberPrecision(0);
    if (std::isfinite(lo)) plot->xAxis->setRange(lo / 1.5, hi * 1.5);
  } else {
    plot->xAxis->setScaleType(QCPAxis::stLinear);
    plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    if (std::isfinite(lo)) {
      const double pad = hi > lo ? (hi - lo) * 0.1 : std::max(1.0, std::abs(lo) * 0.1);
      plot->xAxis->setRange(lo - pad, hi + pad);
    }
  }
}

void fitValueRange(QCustomPlot* plot) {
  bool found = false;
  const QCPRange y = plot->graph(0) ? plot->graph(0)->getValueRange(found) : QCPRange();
  QCPRange all = y;
  for (int i = 1; i < plot->graphCount(); ++i) {
    bool f = false;
    const QCPRange r = plot->graph(i)->getValueRange(f);
    if (f) all = found ? QCPRange(std::min(all.lower, r.lower), std::max(all.upper, r.upper)) : r, found = true;
  }
  if (found) {
    const double pad = all.size() > 0 ? all.size() * 0.12 : 0.1;
    plot->yAxis->setRange(all.lower - pad, all.upper + pad);
  }
}

// V's place on axis A, 0..1 between the ends of the trials drawn (the middle when they are one value).
double onAxis(const QList<double>& lo, const QList<double>& hi, int a, double v) {
  return hi[a] > lo[a] ? (v - lo[a]) / (hi[a] - lo[a]) : 0.5;
}

}  // namespace

SweepKeyPlots::SweepKeyPlots(QWidget* parent) : QWidget(parent) {
  grid_ = new QGridLayout(this);
  grid_->setContentsMargins(0, 0, 0, 0);
  grid_->setSpacing(4);
}

int SweepKeyPlots::pointCount(int key) const { return key >= 0 && key < points_.size() ? points_[key] : 0; }

void SweepKeyPlots::rebuildPlots(const SweepResults& s) {
  QStringList shape;  // rebuilt only when the sweep's keys change: no flicker while it runs
  for (const SweptKey& k : s.keys) shape << k.key;
  shape << QString::number(s.colorKey);
  if (shape != shape_) {
    shape_ = shape;
    qDeleteAll(plots_);
    plots_.clear();
    // Two columns up to four keys: beside the parallel coordinates the page stays as narrow as the live plots.
    const int columns = s.keys.size() <= 4 ? std::max(1, std::min(2, int(s.keys.size()))) : 3;
    for (int k = 0; k < s.keys.size(); ++k) {
      auto* plot = new QCustomPlot;
      plot->setObjectName(QStringLiteral("sweepKeyPlot_") + s.keys[k].key);
      plot->setMinimumSize(170, 130);
      if (s.colorKey >= 0) legendAbove(plot);
      grid_->addWidget(plot, k / std::max(1, columns), k % std::max(1, columns));
      plots_ << plot;
    }
  }
}

void SweepKeyPlots::setResults(const SweepResults& s) {
  rebuildPlots(s);
  points_.clear();
  const QStringList series = s.colorKey >= 0 ? s.keys[s.colorKey].categories : QStringList{tr("trials")};
  for (int k = 0; k < s.keys.size(); ++k) {
    const SweptKey& key = s.keys[k];
    QCustomPlot* plot = plots_[k];
    plot->clearGraphs();
    int drawn = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int c = 0; c < series.size(); ++c) {
      QCPGraph* g = plot->addGraph();
      g->setName(series[c]);
      g->setLineStyle(QCPGraph::lsNone);
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, runColor(c), 7));
      g->setPen(QPen(runColor(c)));
      for (const SweepTrialRow& t : s.trials) {
        if (!std::isfinite(t.metric) || !t.values[k].isValid()) continue;
        if (s.colorKey >= 0 && t.values[s.colorKey].toString() != series[c]) continue;
        const double x = xOf(key, t.values[k]);
        g->addData(x, t.metric), ++drawn;
        lo = std::min(lo, x), hi = std::max(hi, x);
      }
    }
    // The best trial of each series (of the whole sweep without a choice key), ringed.
    QCPGraph* best = plot->addGraph();
    best->setName(s.colorKey >= 0 ? tr("best of each") : tr("best"));
    best->setLineStyle(QCPGraph::lsNone);
    best->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::black, 1.5), Qt::NoBrush, 13));
    for (const SweepTrialRow& t : s.trials)
      if (std::isfinite(t.metric) && t.values[k].isValid() && (!t.bestOf.isEmpty() || (s.colorKey < 0 && t.rank == 1)))
        best->addData(xOf(key, t.values[k]), t.metric);
    if (s.colorKey >= 0) best->removeFromLegend();
    points_ << drawn;

    plot->xAxis->setLabel(key.key + (key.log ? tr(" (log)") : QString()));
    plot->yAxis->setLabel(s.metric);
    scaleKeyAxis(plot, key, lo, hi);
    fitValueRange(plot);
    plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

ParallelCoordinates::ParallelCoordinates(QWidget* parent) : QWidget(parent) {
  plot_ = new QCustomPlot;
  plot_->setObjectName(QStringLiteral("sweepParallelCoordinates"));
  plot_->setMinimumSize(260, 130);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
}

QStringList ParallelCoordinates::axisLabels() const {
  QStringList out;
  const auto ticker = plot_->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
  if (ticker)
    for (const QString& label : ticker->ticks()) out << label;
  return out;
}

void ParallelCoordinates::setResults(const SweepResults& s) {
  plot_->clearPlottables();
  plot_->clearItems();
  lines_ = 0;
  const int axes = int(s.keys.size()) + 1;  // the swept keys, then the metric
  // Each axis normalised to 0..1 over the trials drawn (log for a log range, evenly spaced categories).
  const auto coordinate = [&](int a, const SweepTrialRow& t) {
    return a < s.keys.size() ? (s.keys[a].choice ? xOf(s.keys[a], t.values[a])
                                : s.keys[a].log  ? std::log10(std::max(1e-300, t.values[a].toDouble()))
                                                 : t.values[a].toDouble())
                             : t.metric;
  };
  QList<const SweepTrialRow*> drawn;
  for (const SweepTrialRow& t : s.trials)
    if (std::isfinite(t.metric)) drawn << &t;
  QList<double> lo(axes, INFINITY), hi(axes, -INFINITY);
  for (const SweepTrialRow* t : drawn)
    for (int a = 0; a < axes; ++a)
      lo[a] = std::min(lo[a], coordinate(a, *t)), hi[a] = std::max(hi[a], coordinate(a, *t));
  for (int a = 0; a < s.keys.size(); ++a)
    if (s.keys[a].choice) lo[a] = 0, hi[a] = std::max(0, int(s.keys[a].categories.size()) - 1);

  QCPColorGradient gradient = metricGradient();
  const QCPRange metricRange(lo.value(axes - 1), hi.value(axes - 1));
  // Drawn worst first, so the best lines lie on top.
  for (int i = int(drawn.size()) - 1; i >= 0; --i) {
    const SweepTrialRow& t = *drawn[i];
    auto* curve = new QCPCurve(plot_->xAxis, plot_->yAxis);
    for (int a = 0; a < axes; ++a) curve->addData(a, a, onAxis(lo, hi, a, coordinate(a, t)));
    // The best end of the metric is the gradient's bright end.
    const double m = metricRange.size() > 0 ? (t.metric - metricRange.lower) / metricRange.size() : 1;
    const QColor c = gradient.color(s.maximize ? m : 1 - m, QCPRange(0, 1));
    curve->setPen(QPen(c, t.rank == 1 ? 3 : 1.5));
    curve->setName(t.name);
    ++lines_;
  }
  drawAxes(s, lo, hi);
  showMetricScale(s, gradient, metricRange);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

void ParallelCoordinates::drawAxes(const SweepResults& s, const QList<double>& lo, const QList<double>& hi) {
  const int axes = int(s.keys.size()) + 1;
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QFont small = plot_->font();
  small.setPointSizeF(small.pointSizeF() * 0.8);
  for (int a = 0; a < axes; ++a) {
    const bool metric = a == axes - 1;
    ticker->addTick(a, metric ? tr("metric") : shortKey(s.keys[a].key) + (s.keys[a].log ? tr(" (log)") : QString()));
    auto* line = new QCPItemLine(plot_);
    line->start->setCoords(a, 0), line->end->setCoords(a, 1);
    line->setPen(QPen(QColor(0x80, 0x80, 0x80)));
    // Each axis's own scale: its ends, or a choice's values where they lie.
    QList<QPair<double, QString>> marks;
    if (!metric && s.keys[a].choice) {
      for (int c = 0; c < s.keys[a].categories.size(); ++c)
        marks << qMakePair(onAxis(lo, hi, a, c), s.keys[a].categories[c]);
    } else if (std::isfinite(lo[a])) {
      const bool log = !metric && s.keys[a].log;
      const auto text = [&](double v) { return QString::number(log ? std::pow(10.0, v) : v, 'g', 3); };
      marks << qMakePair(0.0, text(lo[a]));
      if (hi[a] > lo[a]) marks << qMakePair(1.0, text(hi[a]));
    }
    for (const auto& [y, label] : marks) {
      auto* t = new QCPItemText(plot_);
      t->position->setCoords(a, y);
      t->setPositionAlignment(a == axes - 1 ? (Qt::AlignRight | Qt::AlignVCenter) : (Qt::AlignLeft | Qt::AlignVCenter));
      t->setPadding(QMargins(4, 0, 4, 0));
      t->setFont(small);
      t->setText(label);
      t->setBrush(QBrush(QColor(255, 255, 255, 200)));
    }
  }
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setRange(-0.15, axes - 1 + 0.15);
  plot_->xAxis->grid()->setVisible(false);
  plot_->yAxis->setRange(-0.06, 1.06);
  plot_->yAxis->setTickLabels(false);
  plot_->yAxis->setTicks(false);
  plot_->yAxis->grid()->setVisible(false);
  plot_->yAxis->setLabel(tr("each axis: its own range"));
}

void ParallelCoordinates::showMetricScale(const SweepResults& s, const QCPColorGradient& gradient,
                                          const QCPRange& metricRange) {
  // The colour scale names the metric's range beside the lines.
  QCPColorScale* scale = nullptr;
  for (int i = 0; i < plot_->plotLayout()->elementCount(); ++i)
    if (auto* c = qobject_cast<QCPColorScale*>(plot_->plotLayout()->elementAt(i))) scale = c;
  if (!scale) {
    scale = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(0, 1, scale);
    scale->setBarWidth(8);
  }
  QCPColorGradient g = gradient;
  if (!s.maximize) g = g.inverted();
  scale->setGradient(g);
  scale->setDataRange(metricRange.size() > 0 ? metricRange
                                             : QCPRange(metricRange.lower - 0.5, metricRange.lower + 0.5));
  scale->axis()->setLabel(s.metric);
}

}  // namespace tokamak::ui
