// The compare view's metric choices and overlaid curves (see compare_curves.h).
#include "ui/history/compare_curves.h"
#include "ui/common/qt_helpers.h"

#include <QObject>
#include <QVector>
#include <algorithm>
#include <cmath>

#include "engine/base/run/layer_metrics.h"
#include "ui/plots/qcp.h"
#include "ui/history/run_colors.h"

namespace tokamak::ui {
namespace {

// A group drawn as one curve: the mean, and a band (min to max, or one standard deviation either side) where
// every run of the group reported.
void drawGroup(QCustomPlot* plot, const std::vector<QVector<double>>& xsOf, const std::vector<QVector<double>>& vsOf,
               const std::vector<size_t>& members, const QString& name, const QColor& c, bool stdBand) {
  std::vector<std::vector<std::pair<double, double>>> points;
  for (size_t m : members) {
    points.emplace_back();
    for (int i = 0; i < xsOf[m].size(); ++i) points.back().emplace_back(xsOf[m][i], vsOf[m][i]);
  }
  const tokamak::Band band = tokamak::band_over_runs(points);
  const QVector<double> bx(band.x.begin(), band.x.end());
  QVector<double> low(band.min.begin(), band.min.end()), high(band.max.begin(), band.max.end());
  if (stdBand)
    for (int i = 0; i < bx.size(); ++i)
      low[i] = band.mean[size_t(i)] - band.std[size_t(i)], high[i] = band.mean[size_t(i)] + band.std[size_t(i)];
  QCPGraph* lo = plot->addGraph();
  lo->setName(name + (stdBand ? QObject::tr(" (mean − std)") : QObject::tr(" (min)")));
  lo->setPen(Qt::NoPen);
  lo->setData(bx, low, true);
  lo->removeFromLegend();
  QCPGraph* hi = plot->addGraph();
  hi->setName(name + (stdBand ? QObject::tr(" (mean + std)") : QObject::tr(" (max)")));
  hi->setPen(Qt::NoPen);
  hi->setBrush(QColor(c.red(), c.green(), c.blue(), 60));
  hi->setChannelFillGraph(lo);  // the band: filled from max down to min
  hi->setData(bx, high, true);
  hi->removeFromLegend();
  QCPGraph* mean = plot->addGraph();
  mean->setName(name + QObject::tr(" (mean)"));
  mean->setPen(QPen(c, 2));
  mean->setData(bx, QVector<double>(band.mean.begin(), band.mean.end()), true);
}

}  // namespace

std::vector<CurveChoice> curveChoices(const std::vector<std::vector<tokamak::MetricRow>>& metrics, QStringList* names) {
  std::vector<CurveChoice> choices = {{"train_loss", 1, QObject::tr("train loss")},
                                      {"val_loss", 1, QObject::tr("val loss")},
                                      {"tok_s", 1, QObject::tr("tokens / s")},
                                      {"mfu", 100, QObject::tr("MFU (%)")},
                                      {"mem_peak", 1.0 / (1024 * 1024), QObject::tr("peak memory (MiB)")}};
  *names = {QObject::tr("Train loss"), QObject::tr("Val loss"), QObject::tr("tok/s"), QObject::tr("MFU"),
            QObject::tr("Peak memory")};
  for (const auto& run : metrics)
    for (const tokamak::MetricRow& row : run)
      for (const tokamak::MetricValue& v : row.values) {
        // Per-layer statistics are the Layers tab's heatmaps, not two hundred entries here.
        if (v.key == "tokens" || v.key == "wall_s" || tokamak::is_layer_metric(v.key)) continue;
        if (std::any_of(choices.begin(), choices.end(), [&](const CurveChoice& c) { return c.key == v.key; })) continue;
        choices.push_back({v.key, 1, qs(v.key)});
        *names << qs(v.key);
      }
  return choices;
}

void drawCurves(QCustomPlot* plot, const std::vector<std::vector<tokamak::MetricRow>>& metrics,
                const QStringList& labels, const CurveRequest& request) {
  plot->clearGraphs();
  const CurveChoice& y = request.y;
  const std::string& xKey = request.xKey;
  std::vector<QVector<double>> xsOf(metrics.size()), vsOf(metrics.size());
  for (size_t r = 0; r < metrics.size(); ++r)
    for (const tokamak::MetricRow& row : metrics[r]) {
      const double x = !xKey.empty()           ? row[xKey]
                       : request.builtinX == 0 ? double(row.step)
                                               : row[request.builtinX == 1 ? "tokens" : "wall_s"];
      const double v = row[y.key];
      if (std::isnan(x) || std::isnan(v)) continue;  // not reported at this step (val loss: only at evals)
      xsOf[r] << x;
      vsOf[r] << v * y.scale;
    }
  // Not with a metric as X: a cloud has no "same x" to take a mean at.
  const tokamak::Grouping* groups = request.groups;
  const bool grouped = groups && xKey.empty() && groups->group.size() == metrics.size();
  std::vector<bool> drawn(grouped ? groups->size.size() : 0, false);
  for (size_t r = 0; r < metrics.size(); ++r) {
    const int g = grouped ? groups->group[r] : -1;
    if (g >= 0 && groups->size[size_t(g)] > 1) {
      if (drawn[size_t(g)]) continue;
      drawn[size_t(g)] = true;
      std::vector<size_t> members;
      for (size_t m = 0; m < metrics.size(); ++m)
        if (groups->group[m] == g) members.push_back(m);
      const QString name = QObject::tr("%1 ×%2").arg(qs(groups->names[size_t(g)])).arg(members.size());
      drawGroup(plot, xsOf, vsOf, members, name, runColor(int(r)), request.stdBand);
      continue;
    }
    QCPGraph* graph = plot->addGraph();
    graph->setName(labels.value(int(r)));
    graph->setPen(QPen(runColor(int(r)), 2));
    // Sparse series (val loss) would be invisible as lines between a few points: mark every point.
    if (xsOf[r].size() < 40) graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    if (!xKey.empty()) {
      // A metric against a metric is a cloud, not a curve: points only (the graph orders them by x).
      graph->setLineStyle(QCPGraph::lsNone);
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    }
    graph->setData(xsOf[r], vsOf[r], xKey.empty());
  }
  const QString xLabel[] = {QObject::tr("step"), QObject::tr("tokens"), QObject::tr("wall time (s)")};
  plot->xAxis->setLabel(xKey.empty() ? xLabel[request.builtinX] : qs(xKey));
  plot->yAxis->setLabel(y.label);
  plot->rescaleAxes();
  plot->replot();
}

}  // namespace tokamak::ui
