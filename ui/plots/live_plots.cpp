// LivePlots: the metric grid and its shared controls (see live_plots.h).
#include "ui/plots/live_plots.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/base/run/layer_metrics.h"
#include "engine/base/run/phases.h"
#include "engine/base/store/scoreboard.h"  // mean_after_first: the live bar is taken as `runs compare` takes it
#include "ui/plots/layer_heatmap.h"
#include "ui/plots/metric_plot.h"
#include "ui/plots/phase_bars.h"

namespace tokamak::ui {
namespace {
// Series colours are the one thing not taken from the palette: they must tell curves apart on light and dark.
const QColor kBlue(31, 119, 180), kOrange(255, 127, 14), kGreen(44, 160, 44), kRed(214, 39, 40), kPurple(148, 103, 189);

// The picker's entry for all phases at once (its item data; a metric's entry has its key), and the prefix of a
// per-layer statistic's entry ("layers:g_rms").
const QString kPhases = QStringLiteral("phases");
const QString kLayers = QStringLiteral("layers:");

bool isPhase(const std::string& key) { return key.rfind("phase_", 0) == 0; }

int phaseIndex(const std::string& key) {
  for (int p = 0; p < tokamak::kPhaseCount; ++p)
    if (key == tokamak::phase_names()[p].metric) return p;
  return -1;
}

// Counters that stay 0 unless something went wrong: a flat line at 0 is no first picture of a run.
bool flatCounter(const std::string& key) { return key == "skipped_steps" || key == "zero_saved_bytes"; }

}  // namespace

LivePlots::LivePlots(QWidget* parent) : QWidget(parent) {
  xAxis_ = new QComboBox;
  xAxis_->setObjectName("xAxis");
  xAxis_->addItem(tr("Step"), int(XAxis::Step));
  xAxis_->addItem(tr("Tokens"), int(XAxis::Tokens));
  xAxis_->addItem(tr("Wall time"), int(XAxis::WallTime));
  logY_ = new QCheckBox(tr("Log Y"));
  logY_->setObjectName("logY");
  smoothing_ = new QSlider(Qt::Horizontal);
  smoothing_->setObjectName("smoothing");
  smoothing_->setRange(0, 99);
  smoothing_->setValue(60);
  smoothing_->setMaximumWidth(160);
  smoothing_->setToolTip(
      tr("Exponential moving average drawn over the raw curve (0 = off); the raw curve stays, lighter"));
  picker_ = new QComboBox;
  picker_->setObjectName("metricPicker");
  picker_->setToolTip(tr("Any metric the run reports, drawn in the last plot"));
  picker_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  auto* follow = new QPushButton(tr("Follow data"));
  follow->setToolTip(tr("Wheel zooms, drag pans; this (or a double click on a plot) returns to the full range"));

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("X axis")));
  controls->addWidget(xAxis_);
  controls->addWidget(logY_);
  controls->addWidget(new QLabel(tr("Smoothing")));
  controls->addWidget(smoothing_);
  controls->addWidget(follow);
  controls->addWidget(new QLabel(tr("Plot")));
  controls->addWidget(picker_);
  controls->addStretch(1);

  QGridLayout* grid = buildGrid();
  routeMetrics();

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(controls);
  layout->addLayout(grid, 1);

  connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
    for (MetricPlot* p : plots_) p->setXAxis(XAxis(xAxis_->currentData().toInt()));
  });
  connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
    for (MetricPlot* p : plots_) p->setLogY(on);
  });
  connect(smoothing_, &QSlider::valueChanged, this, [this](int v) {
    for (MetricPlot* p : plots_)
      if (p != lr_) p->setSmoothing(v / 100.0);
  });
  connect(picker_, &QComboBox::currentIndexChanged, this, [this] { showPicked(); });
  connect(picker_, &QComboBox::activated, this, [this] { userPicked_ = true; });
  connect(follow, &QPushButton::clicked, this, [this] {
    for (MetricPlot* p : plots_) p->followData();
  });
}

QGridLayout* LivePlots::buildGrid() {
  auto* grid = new QGridLayout;
  grid->setSpacing(2);
  loss_ = add(tr("Loss"), tr("cross-entropy"));
  speed_ = add(tr("Throughput"), tr("tokens/s"));
  mfu_ = add(tr("MFU"), tr("% of peak"));
  memory_ = add(tr("Memory"), tr("MB"));
  lr_ = add(tr("Learning rate"), QString());
  gradNorm_ = add(tr("Grad norm"), tr("before clipping"));
  picked_ = add(tr("Metric"), QString());
  heatmap_ = new LayerHeatmap(/*ownPicker=*/false);
  pickedStack_ = new QStackedWidget;
  pickedStack_->addWidget(picked_);
  pickedStack_->addWidget(heatmap_);
  for (int i = 0; i < plots_.size(); ++i)
    grid->addWidget(plots_[i] == picked_ ? static_cast<QWidget*>(pickedStack_) : plots_[i], i / 3, i % 3);
  phases_ = new PhaseBars;
  grid->addWidget(phases_, int(plots_.size()) / 3, int(plots_.size()) % 3);
  train_ = loss_->addSeries(tr("train"), kBlue);
  val_ = loss_->addSeries(tr("val"), kOrange);
  spikes_ = loss_->addSeries(tr("spikes"), kRed);
  loss_->setSeriesMarkers(spikes_);
  loss_->setSeriesShown(spikes_, false);  // no legend entry until a run has a spike
  scaleSkips_ = loss_->addSeries(tr("fp16 overflows"), kPurple);
  loss_->setSeriesMarkers(scaleSkips_);
  loss_->setSeriesShown(scaleSkips_, false);
  pickedS_ = picked_->addSeries(QString(), kBlue);
  for (int p = 0; p < tokamak::kPhaseCount; ++p) {
    phaseS_[p] = picked_->addSeries(QString::fromUtf8(tokamak::phase_names()[p].label), phaseColor(tokamak::Phase(p)));
    picked_->setSeriesShown(phaseS_[p], false);
  }
  return grid;
}

void LivePlots::routeMetrics() {
  // Rates and sizes read against zero: autoscaled, a steady 5,000 tok/s looked like a ±0.5 tok/s wobble.
  for (MetricPlot* p : {speed_, mfu_, memory_}) p->setYFromZero(true);
  routes_ = {
      {"loss", loss_, train_, 1, false},
      {"val_loss", loss_, val_, 1, false},
      {"tok_s", speed_, speed_->addSeries(tr("tok/s"), kGreen), 1, false},
      {"mfu", mfu_, mfu_->addSeries(tr("MFU"), kPurple), 100, false},  // no peak FLOP/s known (CPU): none sent
      {"mem_allocated", memory_, memory_->addSeries(tr("allocated"), kBlue), 1e-6, true},
      {"mem_reserved", memory_, memory_->addSeries(tr("reserved"), kGreen), 1e-6, true},
      {"mem_peak", memory_, memory_->addSeries(tr("peak"), kRed), 1e-6, true},
      {"lr", lr_, lr_->addSeries(tr("lr"), kBlue), 1, false},
      {"grad_norm", gradNorm_, gradNorm_->addSeries(tr("grad norm"), kRed), 1, false},
  };
  lr_->setSmoothing(0);  // the schedule is exact: nothing to smooth
}

MetricPlot* LivePlots::add(const QString& title, const QString& unit) {
  auto* p = new MetricPlot(title, unit);
  plots_ << p;
  return p;
}

void LivePlots::append(const std::string& key, double step, double tokens, double wall, double value) {
  // Keys are few (a dozen) and fixed for a run: a short scan finds the key's history and, through it, the
  // default plots it feeds, so a step costs one lookup per metric.
  auto h = std::find_if(history_.begin(), history_.end(), [&](const History& x) { return x.key == key; });
  if (h == history_.end()) {
    h = history_.insert(history_.end(), History{key, {}, {}, {}, {}, {}});
    for (size_t r = 0; r < routes_.size(); ++r)
      if (routes_[r].key == key) h->routes.push_back(r);
    {
      const QSignalBlocker quiet(picker_);
      if (isPhase(key) && picker_->findData(kPhases) < 0) picker_->insertItem(0, tr("step phases"), kPhases);
      picker_->addItem(QString::fromStdString(key), QString::fromStdString(key));
      if (pickedKey_.empty()) picker_->setCurrentIndex(-1);
    }
    // A phase first reported while the phases are shown joins them.
    if (const int p = phaseIndex(key); p >= 0 && pickedKey_ == kPhases.toStdString()) {
      h->pickedSeries = phaseS_[p];
      picked_->setSeriesShown(phaseS_[p], true);
    }
    autoPick();
  }
  for (size_t i : h->routes) {
    const Route& r = routes_[i];
    if (!r.positiveOnly || value > 0) r.plot->append(r.series, step, tokens, wall, value * r.scale);
  }
  h->step.push_back(step), h->tokens.push_back(tokens), h->wall.push_back(wall), h->value.push_back(value);
  if (h->pickedSeries >= 0) picked_->append(h->pickedSeries, step, tokens, wall, value);
}

void LivePlots::autoPick() {
  if (userPicked_) return;
  int want = picker_->findData(kPhases);
  const auto routed = [&](const std::string& k) {
    return isPhase(k) || std::any_of(routes_.begin(), routes_.end(), [&](const Route& r) { return r.key == k; });
  };
  // No such key: the plot stays empty rather than draw a default plot's curve twice.
  for (size_t i = 0; want < 0 && i < history_.size(); ++i)
    if (!routed(history_[i].key) && !flatCounter(history_[i].key))
      want = picker_->findData(QString::fromStdString(history_[i].key));
  if (want >= 0 && want != picker_->currentIndex()) picker_->setCurrentIndex(want);
}

// The picked metric's whole history (or every phase's), redrawn: a choice made late still shows the run from
// its start.
void LivePlots::showPicked() {
  const QString data = picker_->currentData().toString();
  if (data.startsWith(kLayers)) {
    heatmap_->setStat(data.mid(kLayers.size()).toStdString());
    heatmap_->setTitle(picker_->currentText());
    pickedStack_->setCurrentWidget(heatmap_);
    pickedKey_ = data.toStdString();
    return;
  }
  pickedStack_->setCurrentWidget(picked_);
  picked_->clear();
  const bool phases = data == kPhases;
  const QString text = picker_->currentText();
  pickedKey_ = phases ? kPhases.toStdString() : text.toStdString();
  picked_->setTitle(phases ? tr("Step phases") : text.isEmpty() ? tr("Metric") : text);
  picked_->yAxis->setLabel(phases ? tr("ms per step") : QString());
  picked_->renameSeries(pickedS_, phases ? QString() : text);
  picked_->setSeriesShown(pickedS_, !phases);
  std::array<bool, tokamak::kPhaseCount> reported{};
  for (History& h : history_) {
    const int p = phaseIndex(h.key);
    h.pickedSeries = phases ? (p >= 0 ? phaseS_[p] : -1) : (h.key == pickedKey_ ? pickedS_ : -1);
    if (phases && p >= 0) reported[size_t(p)] = true;
    if (h.pickedSeries >= 0)
      for (int i = 0; i < h.value.size(); ++i)
        picked_->append(h.pickedSeries, h.step[i], h.tokens[i], h.wall[i], h.value[i]);
  }
  // Only the phases the run reports: one process has no all-reduce to explain.
  for (int p = 0; p < tokamak::kPhaseCount; ++p) picked_->setSeriesShown(phaseS_[p], reported[size_t(p)]);
  picked_->flush();
}

void LivePlots::appendSteps(const std::vector<StepEvent>& steps) {
  for (const StepEvent& e : steps) {
    // fp16: steps the loss scale skipped since the last report (an overflow, then a lower scale), marked at the
    // report's loss. The scale itself is a metric like any other: the picker draws `loss_scale`.
    const double skipped = e.metric("scale_skipped_steps"), loss = e.metric("loss");
    if (!std::isnan(skipped) && skipped > scaleSkipped_ && !std::isnan(loss)) {
      loss_->setSeriesShown(scaleSkips_, true);
      loss_->append(scaleSkips_, static_cast<double>(e.step), static_cast<double>(e.tokens), e.wall_s, loss);
    }
    if (!std::isnan(skipped)) scaleSkipped_ = skipped;
    appendLayers(e);
    for (const MetricValue& v : e.metrics)
      if (!tokamak::is_layer_metric(v.key))
        append(v.key, static_cast<double>(e.step), static_cast<double>(e.tokens), e.wall_s, v.value);
    for (int p = 0; p < tokamak::kPhaseCount; ++p) {
      const double ms = e.metric(tokamak::phase_names()[p].metric);
      if (!std::isnan(ms)) phaseValues_[p].push_back(ms), phasesChanged_ = true;
    }
  }
}

void LivePlots::appendLayers(const StepEvent& e) {
  bool any = false;
  for (const MetricValue& v : e.metrics) any = any || tokamak::is_layer_metric(v.key);
  if (!any) return;
  heatmap_->append(e.step, e.metrics);
  if (picker_->findData(kLayers + tokamak::layer_stats().front().id) >= 0) return;
  const QSignalBlocker quiet(picker_);  // what is shown stays; the entries are offered
  for (const tokamak::LayerStat& s : tokamak::layer_stats()) {
    picker_->addItem(tr("layers: %1").arg(tr(s.label)), kLayers + s.id);
    picker_->setItemData(picker_->count() - 1, tr(s.help), Qt::ToolTipRole);
  }
  if (pickedKey_.empty()) picker_->setCurrentIndex(-1);
}

bool LivePlots::heatmapShown() const { return pickedStack_->currentWidget() == heatmap_; }

void LivePlots::showPhases() {
  if (!phasesChanged_) return;
  phasesChanged_ = false;
  PhaseBars::Run run{tr("this run"), {}};
  for (int p = 0; p < tokamak::kPhaseCount; ++p) run.ms[p] = tokamak::mean_after_first(phaseValues_[p]);
  phases_->setRuns({run});
}

void LivePlots::appendEvals(const std::vector<EvalEvent>& evals) {
  for (const EvalEvent& e : evals)
    for (const MetricValue& v : e.metrics)
      append(v.key, static_cast<double>(e.step), static_cast<double>(e.tokens), e.wall_s, v.value);
}

void LivePlots::addGap() {
  for (MetricPlot* p : plots_) p->addGap();
  // The histories too, so that a metric picked later replays with the gap.
  for (History& h : history_)
    if (!h.value.isEmpty() && !std::isnan(h.value.last()))
      h.step.push_back(h.step.last()), h.tokens.push_back(h.tokens.last()), h.wall.push_back(h.wall.last()),
          h.value.push_back(std::numeric_limits<double>::quiet_NaN());
  flush();
}

void LivePlots::markSpikes(const std::vector<SpikeEvent>& spikes) {
  for (const SpikeEvent& e : spikes) {
    loss_->setSeriesShown(spikes_, true);
    // The loss at the spike; a gradient-norm spike is marked on the loss curve's level, at its step.
    double y = e.signal == "loss" ? e.value : std::numeric_limits<double>::quiet_NaN();
    if (std::isnan(y))
      for (const History& h : history_)
        if (h.key == "loss" && !h.value.isEmpty()) y = h.value.last();
    if (!std::isnan(y)) loss_->append(spikes_, static_cast<double>(e.step), static_cast<double>(e.tokens), e.wall_s, y);
  }
}

void LivePlots::dropAfter(int64_t step) {
  const double s = static_cast<double>(step);
  for (MetricPlot* p : plots_) p->dropAfter(s);
  for (History& h : history_) {
    qsizetype keep = 0;
    while (keep < h.step.size() && h.step[keep] <= s) ++keep;
    h.step.resize(keep), h.tokens.resize(keep), h.wall.resize(keep), h.value.resize(keep);
  }
}

int LivePlots::spikeMarks() const { return loss_->pointCount(spikes_); }
int LivePlots::scaleSkipMarks() const { return loss_->pointCount(scaleSkips_); }

void LivePlots::flush() {
  for (MetricPlot* p : plots_) p->flush();
  showPhases();
}

void LivePlots::clear() {
  for (MetricPlot* p : plots_) p->clear();
  loss_->setSeriesShown(spikes_, false);
  loss_->setSeriesShown(scaleSkips_, false);
  scaleSkipped_ = 0;
  for (auto& v : phaseValues_) v.clear();
  phasesChanged_ = false;
  phases_->setRuns({});
  history_.clear();
  pickedKey_.clear();
  userPicked_ = false;
  picked_->setTitle(tr("Metric"));
  picked_->yAxis->setLabel(QString());
  picked_->setSeriesShown(pickedS_, true);
  for (int s : phaseS_) picked_->setSeriesShown(s, false);
  heatmap_->clear();
  pickedStack_->setCurrentWidget(picked_);
  const QSignalBlocker quiet(picker_);
  picker_->clear();
}

int LivePlots::trainPoints() const { return loss_->pointCount(train_); }
int LivePlots::valPoints() const { return loss_->pointCount(val_); }

}  // namespace tokamak::ui
