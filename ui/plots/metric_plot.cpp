// MetricPlot: batched appends, raw + EMA curves, zoom/pan/hover (see metric_plot.h).
#include "ui/plots/metric_plot.h"

#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <limits>

namespace tokamak::ui {

MetricPlot::MetricPlot(const QString& title, const QString& unit, QWidget* parent)
    : QCustomPlot(parent), title_(title), unit_(unit) {
  setObjectName(title);
  setMinimumSize(220, 120);  // three rows of them fit beside the setup on a 1366×768 screen
  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  // Thousands of points per pixel column: draw their envelope, not each one (keeps 100k points cheap).
  setNotAntialiasedElements(QCP::aeAll);
  plotLayout()->insertRow(0);
  titleElement_ = new QCPTextElement(this, title, QFont(font().family(), font().pointSize(), QFont::Bold));
  plotLayout()->addElement(0, 0, titleElement_);
  yAxis->setLabel(unit);
  // The legend goes under the title (updateLegend): inside the axis rect it covered the curves' newest points.
  axisRect()->insetLayout()->take(legend);
  legend->setVisible(false);
  legend->setFont(QFont(font().family(), 8));
  legend->setBorderPen(Qt::NoPen);
  legend->setIconSize(QSize(14, 8));
  legend->setIconTextPadding(3);
  legend->setRowSpacing(0);
  legend->setMargins(QMargins(2, 0, 2, 0));
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  legend->setWrap(3);  // three entries a line: a plot's narrowest width still fits them
  tracer_ = new QCPItemTracer(this);
  tracer_->setStyle(QCPItemTracer::tsCircle);
  tracer_->setSize(6);
  tracer_->setVisible(false);
  setXAxis(XAxis::Step);
  applyPalette();
}

int MetricPlot::addSeries(const QString& name, const QColor& color) {
  Series s;
  s.name = name;
  s.color = color;
  s.raw = addGraph();
  s.smooth = addGraph();
  s.raw->setName(name);
  s.smooth->setName(name);  // the legend's entry while smoothing (styleSeries)
  s.raw->setAdaptiveSampling(true);
  s.smooth->setAdaptiveSampling(true);
  series_.push_back(s);
  styleSeries(series_.back());
  updateLegend();
  return static_cast<int>(series_.size()) - 1;
}

void MetricPlot::setSeriesShown(int series, bool shown) {
  Series& s = series_[series];
  s.shown = shown;
  styleSeries(s);
  updateLegend();
  replot(rpQueuedReplot);
}

void MetricPlot::updateLegend() {
  const bool want = std::count_if(series_.begin(), series_.end(), [](const Series& s) { return s.shown; }) > 1;
  const bool placed = legend->layout() != nullptr;
  if (want && !placed) {
    plotLayout()->insertRow(1);
    plotLayout()->addElement(1, 0, legend);
    plotLayout()->setRowStretchFactor(1, 0.001);  // as tall as its lines, the axis rect takes the rest
  } else if (!want && placed) {
    plotLayout()->take(legend);
    plotLayout()->simplify();
  }
  legend->setVisible(want);  // a legend out of the layout would still be drawn, at its last place
  legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // entries taken out leave no holes
  for (int i = 0; i < legend->elementCount(); ++i)            // tight lines: a small plot keeps its height for data
    if (QCPLayoutElement* item = legend->elementAt(i)) item->setMargins(QMargins(4, 0, 4, 0));
}

void MetricPlot::setYFromZero(bool fromZero) {
  fromZero_ = fromZero;
  followData();
}

void MetricPlot::renameSeries(int series, const QString& name) {
  Series& s = series_[series];
  s.name = name;
  s.raw->setName(name);
  s.smooth->setName(name);
}

void MetricPlot::setTitle(const QString& title) {
  title_ = title;
  titleElement_->setText(title);
  replot(rpQueuedReplot);
}

void MetricPlot::styleSeries(Series& s) {
  const bool smoothing = smoothing_ > 0;
  QColor light = s.color;
  light.setAlpha(smoothing ? 70 : 255);  // raw stays visible under the smoothed curve, lighter
  s.raw->setPen(QPen(light, 1));
  // 1 px on purpose: a wider pen takes the raster engine's slow stroker, ~35 ms per replot at 100k points.
  s.smooth->setPen(QPen(s.color, 1));
  s.raw->setVisible(s.shown);
  s.smooth->setVisible(smoothing && s.shown && !s.markers);
  if (s.markers) {
    s.raw->setPen(QPen(s.color, 1.5));
    s.raw->setLineStyle(QCPGraph::lsNone);
    s.raw->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 9));
    s.smooth->removeFromLegend();
    if (s.shown) s.raw->addToLegend();
    else s.raw->removeFromLegend();
    return;
  }
  // The legend's line is the curve drawn strongest: the smoothed one while smoothing (the raw one is faint).
  (smoothing ? s.raw : s.smooth)->removeFromLegend();
  QCPGraph* entry = smoothing ? s.smooth : s.raw;
  if (s.shown) entry->addToLegend();
  else entry->removeFromLegend();
}

void MetricPlot::setSeriesMarkers(int series) {
  Series& s = series_[series];
  s.markers = true;
  styleSeries(s);
}

void MetricPlot::dropAfter(double step) {
  bool any = false;
  for (Series& s : series_) {
    if (s.markers) continue;
    qsizetype keep = 0;
    while (keep < s.step.size() && s.step[keep] <= step) ++keep;
    if (keep == s.step.size()) continue;
    s.step.resize(keep), s.tokens.resize(keep), s.wall.resize(keep), s.value.resize(keep);
    any = true;
  }
  if (any) rebuild();
}

void MetricPlot::append(int series, double step, double tokens, double wall, double value) {
  Series& s = series_[series];
  s.step.push_back(step), s.tokens.push_back(tokens), s.wall.push_back(wall), s.value.push_back(value);
}

void MetricPlot::addGap() {
  for (int i = 0; i < series_.size(); ++i) {
    const Series& s = series_[i];
    if (!s.value.isEmpty() && !std::isnan(s.value.last()))
      append(i, s.step.last(), s.tokens.last(), s.wall.last(), std::numeric_limits<double>::quiet_NaN());
  }
}

int MetricPlot::pointCount(int series) const {
  const QVector<double>& v = series_.at(series).value;
  return static_cast<int>(v.size()) - gapCount(series);
}

int MetricPlot::shownPointCount() const {
  int n = 0;
  for (int i = 0; i < series_.size(); ++i)
    if (series_[i].shown) n += pointCount(i);
  return n;
}

int MetricPlot::gapCount(int series) const {
  const QVector<double>& v = series_.at(series).value;
  return static_cast<int>(std::count_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }));
}

const QVector<double>& MetricPlot::keys(const Series& s) const {
  return xAxis_ == XAxis::Tokens ? s.tokens : xAxis_ == XAxis::WallTime ? s.wall : s.step;
}

void MetricPlot::flush() {
  bool any = false;
  for (Series& s : series_) {
    const int n = static_cast<int>(s.value.size());
    if (s.flushed == n) continue;
    any = true;
    const QVector<double>& k = keys(s);
    QVector<double> keys = k.mid(s.flushed), raw = s.value.mid(s.flushed), smooth(n - s.flushed);
    for (int i = s.flushed; i < n; ++i) {
      if (std::isnan(s.value[i])) {  // a gap breaks the smoothed line too; the average goes on after it
        smooth[i - s.flushed] = s.value[i];
        continue;
      }
      s.ema = i == 0 ? s.value[i] : smoothing_ * s.ema + (1 - smoothing_) * s.value[i];
      smooth[i - s.flushed] = s.ema;
    }
    s.raw->addData(keys, raw, /*alreadySorted=*/!s.markers);  // a spike after a rollback comes before the last
    s.smooth->addData(keys, smooth, true);
    s.flushed = n;
  }
  if (!any) return;
  if (follow_) fitRange();
  replot(rpQueuedReplot);
}

void MetricPlot::clear() {
  for (Series& s : series_) {
    s.step.clear(), s.tokens.clear(), s.wall.clear(), s.value.clear();
    s.flushed = 0;
    s.raw->data()->clear();
    s.smooth->data()->clear();
  }
  follow_ = true;
  replot(rpQueuedReplot);
}

void MetricPlot::rebuild() {
  for (Series& s : series_) {
    s.flushed = 0;
    s.raw->data()->clear();
    s.smooth->data()->clear();
    styleSeries(s);
  }
  updateLegend();
  follow_ = true;
  flush();
  replot(rpQueuedReplot);
}

void MetricPlot::setXAxis(XAxis axis) {
  xAxis_ = axis;
  xAxis->setLabel(axis == XAxis::Tokens ? tr("tokens") : axis == XAxis::WallTime ? tr("seconds") : tr("step"));
  rebuild();
}

void MetricPlot::setLogY(bool log) {
  logY_ = log;
  yAxis->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log) yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  fitTicks();
  followData();
}

void MetricPlot::setSmoothing(double weight) {
  smoothing_ = std::clamp(weight, 0.0, 0.99);
  rebuild();
}

void MetricPlot::followData() {
  follow_ = true;
  fitRange();
  replot(rpQueuedReplot);
}

void MetricPlot::fitRange() {
  rescaleAxes(true);
  // A series that does not change (a learning rate held by wsd, say) has a range of no height, which
  // QCustomPlot centres in the old span: 0.003 was drawn as 0 on an axis from -2 to 2. Give it ±10% of itself.
  bool found = false;
  QCPRange values;
  for (int i = 0; i < graphCount(); ++i) {
    bool any = false;
    const QCPRange r = graph(i)->getValueRange(any);
    if (!any || !graph(i)->visible()) continue;
    values = found ? QCPRange(std::min(values.lower, r.lower), std::max(values.upper, r.upper)) : r;
    found = true;
  }
  if (found && values.size() == 0 && !logY_) {
    const double pad = values.lower != 0 ? std::abs(values.lower) * 0.1 : 1.0;
    yAxis->setRange(values.lower - pad, values.upper + pad);
  }
  if (!fromZero_ || logY_) return;
  const QCPRange r = yAxis->range();
  if (r.lower > 0) yAxis->setRange(0, r.upper * 1.05);  // a little room over the top point
}

QString MetricPlot::readoutAt(double key) const {
  QStringList lines;
  const QString x = xAxis_ == XAxis::Tokens ? tr("tokens") : xAxis_ == XAxis::WallTime ? tr("seconds") : tr("step");
  for (const Series& s : series_) {
    if (s.flushed == 0 || !s.shown) continue;
    const QVector<double>& k = keys(s);
    // The point of this series nearest to the cursor's x.
    int i = static_cast<int>(std::lower_bound(k.begin(), k.begin() + s.flushed, key) - k.begin());
    if (i >= s.flushed || (i > 0 && key - k[i - 1] < k[i] - key)) i = std::max(0, i - 1);
    QString line = QString("%1 %2: %3 %4").arg(x).arg(k[i], 0, 'g', 8).arg(s.name).arg(s.value[i], 0, 'g', 5);
    if (smoothing_ > 0) line += tr(" (smoothed %1)").arg(s.smooth->data()->at(i)->value, 0, 'g', 5);
    lines << line;
  }
  return lines.join('\n');
}

void MetricPlot::mousePressEvent(QMouseEvent* event) {
  follow_ = false;  // the user takes over the range until a double click
  QCustomPlot::mousePressEvent(event);
}

void MetricPlot::wheelEvent(QWheelEvent* event) {
  follow_ = false;
  QCustomPlot::wheelEvent(event);
}

void MetricPlot::mouseDoubleClickEvent(QMouseEvent* event) {
  QCustomPlot::mouseDoubleClickEvent(event);
  followData();
}

void MetricPlot::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  const Series* s = hoverSeries();
  if (!s) return;
  const double key = xAxis->pixelToCoord(event->pos().x());
  tracer_->setGraph(smoothing_ > 0 ? s->smooth : s->raw);
  tracer_->setGraphKey(key);
  tracer_->setVisible(true);
  QToolTip::showText(event->globalPosition().toPoint(), readoutAt(key), this);
  replot(rpQueuedReplot);
}

const MetricPlot::Series* MetricPlot::hoverSeries() const {
  for (const Series& s : series_)
    if (s.shown && s.flushed > 0) return &s;
  return nullptr;
}

void MetricPlot::resizeEvent(QResizeEvent* event) {
  QCustomPlot::resizeEvent(event);
  fitTicks();
}

void MetricPlot::fitTicks() {
  // Five ticks in a plot 140 px high (a 768-pixel screen) wrote their labels over each other.
  yAxis->ticker()->setTickCount(std::clamp(height() / 40, 2, 5));
}

void MetricPlot::changeEvent(QEvent* event) {
  QCustomPlot::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) applyPalette();
}

void MetricPlot::applyPalette() {
  // Axes and background follow the system palette (light or dark); only the series have fixed colours.
  const QPalette p = palette();
  setBackground(p.brush(QPalette::Base));
  legend->setBrush(p.brush(QPalette::Base));
  legend->setTextColor(p.color(QPalette::Text));
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setBasePen(QPen(p.color(QPalette::Text)));
    axis->setTickPen(QPen(p.color(QPalette::Text)));
    axis->setSubTickPen(QPen(p.color(QPalette::Text)));
    axis->setTickLabelColor(p.color(QPalette::Text));
    axis->setLabelColor(p.color(QPalette::Text));
    axis->grid()->setPen(QPen(p.color(QPalette::Mid), 0, Qt::DotLine));
  }
  if (auto* title = qobject_cast<QCPTextElement*>(plotLayout()->element(0, 0)))
    title->setTextColor(p.color(QPalette::Text));
  tracer_->setPen(QPen(p.color(QPalette::Text)));
  replot(rpQueuedReplot);
}

}  // namespace tokamak::ui
