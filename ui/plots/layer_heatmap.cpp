// LayerHeatmap (see layer_heatmap.h).
#include "ui/plots/layer_heatmap.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QSharedPointer>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/base/run/layer_metrics.h"
#include "engine/base/store/run_store.h"
#include "ui/plots/qcp.h"

namespace tokamak::ui {
namespace {

// More columns than a screen has pixels say nothing more: past this, a column covers several reports' steps.
constexpr int64_t kMaxColumns = 2000;

const tokamak::LayerStat* statOf(const std::string& id) {
  for (const tokamak::LayerStat& s : tokamak::layer_stats())
    if (id == s.id) return &s;
  return nullptr;
}

}  // namespace

LayerHeatmap::LayerHeatmap(bool ownPicker, QWidget* parent) : QWidget(parent) {
  setObjectName("layerHeatmap");
  setMinimumSize(220, 120);  // a cell of the live plots' grid: as small as a MetricPlot, its labels included
  title_ = new QLabel;
  title_->setObjectName("heatmapTitle");
  readout_ = new QLabel(tr("Click a cell for its value"));
  readout_->setObjectName("heatmapReadout");
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plot_ = new QCustomPlot;
  plot_->setObjectName("heatmapPlot");
  plot_->xAxis->setLabel(tr("step"));
  map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
  scale_ = new QCPColorScale(plot_);
  plot_->plotLayout()->addElement(0, 1, scale_);
  map_->setColorScale(scale_);
  QCPColorGradient gradient(QCPColorGradient::gpThermal);
  gradient.setNanHandling(QCPColorGradient::nhTransparent);  // a report without this statistic: no cell
  map_->setGradient(gradient);
  map_->setInterpolate(false);
  auto* margins = new QCPMarginGroup(plot_);
  plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  connect(plot_, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) {
    clicked(plot_->xAxis->pixelToCoord(e->pos().x()), plot_->yAxis->pixelToCoord(e->pos().y()));
  });

  auto* top = new QHBoxLayout;
  top->addWidget(title_);
  if (ownPicker) {
    picker_ = new QComboBox;
    picker_->setObjectName("heatmapStat");
    for (const tokamak::LayerStat& s : tokamak::layer_stats()) {
      picker_->addItem(tr(s.label), QString(s.id));
      picker_->setItemData(picker_->count() - 1, tr(s.help), Qt::ToolTipRole);
    }
    picker_->setCurrentIndex(picker_->findData(QString::fromStdString(stat_)));
    connect(picker_, &QComboBox::currentIndexChanged, this,
            [this] { setStat(picker_->currentData().toString().toStdString()); });
    top->addWidget(picker_);
  }
  top->addStretch(1);
  top->addWidget(readout_);  // beside the title, not under the map: one row of text for both
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(top);
  layout->addWidget(plot_, 1);
}

void LayerHeatmap::append(int64_t step, const tokamak::Metrics& metrics) {
  bool any = false;
  for (const tokamak::MetricValue& v : metrics)
    if (const auto k = tokamak::parse_layer_metric(v.key)) values_[k->stat][k->group][step] = v.value, any = true;
  if (!any) return;
  if (steps_.empty() || step > steps_.back()) steps_.push_back(step);
  else if (!std::binary_search(steps_.begin(), steps_.end(), step))  // a rollback's retrained report
    steps_.insert(std::lower_bound(steps_.begin(), steps_.end(), step), step);
  redraw();
}

void LayerHeatmap::setRows(const std::vector<tokamak::MetricRow>& rows) {
  values_.clear();
  steps_.clear();
  for (const tokamak::MetricRow& r : rows) {
    bool any = false;
    for (const tokamak::MetricValue& v : r.values)
      if (const auto k = tokamak::parse_layer_metric(v.key)) values_[k->stat][k->group][r.step] = v.value, any = true;
    if (any) steps_.push_back(r.step);
  }
  std::sort(steps_.begin(), steps_.end());
  redraw();
}

void LayerHeatmap::clear() {
  values_.clear();
  steps_.clear();
  readout_->setText(tr("Click a cell for its value"));
  redraw();
}

void LayerHeatmap::setTitle(const QString& title) { title_->setText(title); }

void LayerHeatmap::setStat(const std::string& stat) {
  if (!statOf(stat)) return;
  stat_ = stat;
  if (picker_) {
    const QSignalBlocker quiet(picker_);
    picker_->setCurrentIndex(picker_->findData(QString::fromStdString(stat)));
  }
  redraw();
}

std::vector<std::string> LayerHeatmap::groups() const {
  std::vector<std::string> out;
  const auto it = values_.find(stat_);
  if (it == values_.end()) return out;
  for (const auto& [group, unused] : it->second) out.push_back(group);
  std::sort(out.begin(), out.end(), tokamak::group_before);
  return out;
}

void LayerHeatmap::redraw() {
  shownGroups_ = groups();
  const tokamak::LayerStat* s = statOf(stat_);
  scale_->axis()->setLabel(s ? tr(s->label) : QString());
  map_->data()->clear();
  if (shownGroups_.empty() || steps_.empty()) {
    plot_->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const int64_t first = steps_.front(), last = steps_.back();
  cell_ = std::numeric_limits<int64_t>::max();
  for (size_t i = 1; i < steps_.size(); ++i) cell_ = std::min(cell_, steps_[i] - steps_[i - 1]);
  if (steps_.size() < 2) cell_ = 1;
  cell_ = std::max(cell_, (last - first) / kMaxColumns + 1);
  // Two columns at least: a map of one column has no width to draw.
  const int columns = static_cast<int>(std::max<int64_t>(2, (last - first) / cell_ + 1));
  const int rows = static_cast<int>(shownGroups_.size());
  map_->data()->setSize(columns, std::max(2, rows));  // a one-layer model's blocks: a second, empty row
  map_->data()->setRange(QCPRange(first, first + (columns - 1) * cell_), QCPRange(0, std::max(2, rows) - 1));
  map_->data()->fill(std::numeric_limits<double>::quiet_NaN());
  bool positive = true;
  const auto& byGroup = values_[stat_];
  const auto column = [&](int64_t step) { return static_cast<int>((step - first) / cell_); };
  for (int r = 0; r < rows; ++r) {
    const auto& series = byGroup.at(shownGroups_[r]);
    for (auto it = series.begin(); it != series.end(); ++it) {
      // A report's value holds until the next report's column: reports 9 steps apart after the first (1, 10, 20)
      // would otherwise leave a column empty every ninth.
      const auto next = std::next(it);
      const int to = next == series.end() ? column(it->first) : std::max(column(it->first), column(next->first) - 1);
      for (int x = column(it->first); x <= to && x < columns; ++x) map_->data()->setCell(x, r, it->second);
      positive = positive && it->second > 0;
    }
  }
  // Gradients and updates span decades from the embedding to the last block: a log scale shows each layer apart.
  const bool log = positive && stat_ != "attn_entropy";
  scale_->setDataScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (log) scale_->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  else scale_->axis()->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  scale_->axis()->setNumberFormat(log ? "eb" : "gb");
  scale_->axis()->setNumberPrecision(log ? 0 : 3);
  map_->rescaleDataRange(true);
  if (shared_.first < shared_.second && (!log || shared_.first > 0))
    map_->setDataRange(QCPRange(shared_.first, shared_.second));
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int every = std::max(1, rows / 16);  // at most 16 names on the axis; a click names any row
  for (int r = 0; r < rows; r += every) ticker->addTick(r, QString::fromStdString(shownGroups_[r]));
  plot_->yAxis->setTicker(ticker);
  plot_->xAxis->setRange(first - 0.5 * cell_, first + (columns - 0.5) * cell_);
  plot_->yAxis->setRange(-0.5, rows - 0.5);
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString LayerHeatmap::pick(const std::string& group, int64_t step) {
  const auto stat = values_.find(stat_);
  if (stat == values_.end()) return {};
  const auto g = stat->second.find(group);
  if (g == stat->second.end()) return {};
  // The report a click lands on: the nearest one that has this group's value.
  auto at = g->second.lower_bound(step);
  if (at == g->second.end() || (at != g->second.begin() && step - std::prev(at)->first < at->first - step)) --at;
  if (at == g->second.end()) return {};
  const tokamak::LayerStat* s = statOf(stat_);
  const QString text = QString("%1 · step %2 · %3 %4")
                           .arg(QString::fromStdString(group))
                           .arg(at->first)
                           .arg(s ? tr(s->label) : QString::fromStdString(stat_))
                           .arg(at->second, 0, 'g', 4);
  readout_->setText(text);
  return text;
}

QString LayerHeatmap::readout() const { return readout_->text(); }

std::pair<double, double> LayerHeatmap::valueRange() const {
  std::pair<double, double> r{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  const auto stat = values_.find(stat_);
  if (stat == values_.end()) return r;
  for (const auto& [group, series] : stat->second)
    for (const auto& [step, v] : series) r.first = std::min(r.first, v), r.second = std::max(r.second, v);
  return r;
}

void LayerHeatmap::setSharedRange(std::pair<double, double> range) {
  shared_ = range;
  redraw();
}

void LayerHeatmap::clicked(double key, double value) {
  const int row = static_cast<int>(std::lround(value));
  if (row < 0 || row >= static_cast<int>(shownGroups_.size()) || steps_.empty()) return;
  pick(shownGroups_[row], static_cast<int64_t>(std::llround(key)));
}

}  // namespace tokamak::ui
