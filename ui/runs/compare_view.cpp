// The compare view (see compare_view.h): controls, overlaid curves, scoreboard and config diff.
#include "ui/runs/compare_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include "ui/plots/phase_bars.h"
#include "ui/plots/qcp.h"
#include "ui/plots/speedup_waterfall.h"
#include "ui/runs/summary_table.h"
#include "ui/runs/sample_compare.h"

namespace tokamak::ui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString fmt(const char* f, double v) { return std::isnan(v) ? QStringLiteral("-") : QString::asprintf(f, v); }

// Tableau's ten colours: distinct on light and dark backgrounds and for most colour-blind readers.
const QColor kPalette[] = {QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728), QColor(0x9467bd),
                           QColor(0x8c564b), QColor(0xe377c2), QColor(0x7f7f7f), QColor(0xbcbd22), QColor(0x17becf)};

QTableWidget* makeTable(QWidget* parent) {
  auto* t = new QTableWidget(parent);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->verticalHeader()->setVisible(false);
  t->horizontalHeader()->setStretchLastSection(true);
  return t;
}

QTableWidgetItem* cell(const QString& text, bool number = false) {
  auto* item = new QTableWidgetItem(text);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  title_ = new QLabel(tr("Select two or more runs and press Compare."), this);
  metricBox_ = new QComboBox(this);
  metricBox_->setObjectName(QStringLiteral("compareMetric"));
  xBox_ = new QComboBox(this);
  xBox_->setObjectName(QStringLiteral("compareXAxis"));
  groupBox_ = new QComboBox(this);
  groupBox_->setObjectName(QStringLiteral("compareGroup"));
  groupBox_->addItem(tr("No groups"), QStringLiteral("none"));
  groupBox_->addItem(tr("Same config but seed"), QStringLiteral("seed"));
  groupBox_->addItem(tr("Name pattern"), QStringLiteral("name"));
  groupBox_->addItem(tr("First tag"), QStringLiteral("tag"));
  groupBox_->setToolTip(
      tr("Runs of one group are drawn as their mean with a band, and get a row under the scoreboard"));
  patternEdit_ = new QLineEdit(this);
  patternEdit_->setObjectName(QStringLiteral("groupPattern"));
  patternEdit_->setPlaceholderText(QStringLiteral("(.*)-s[0-9]+"));
  patternEdit_->setToolTip(
      tr("A regular expression over run names; runs with the same first capture group "
         "(or the same match, without one) form a group"));
  patternEdit_->setVisible(false);
  bandBox_ = new QComboBox(this);
  bandBox_->setObjectName(QStringLiteral("groupBand"));
  bandBox_->addItems({tr("min–max band"), tr("± std band")});
  bandBox_->setEnabled(false);
  connect(groupBox_, &QComboBox::currentIndexChanged, this, [this] { applyGroupControls(); });
  connect(patternEdit_, &QLineEdit::editingFinished, this, [this] { applyGroupControls(); });
  connect(bandBox_, &QComboBox::currentIndexChanged, this, [this](int i) { setBand(BandKind(i)); });
  rebuildMetricChoices();  // fills both boxes
  baselineBox_ = new QComboBox(this);
  baselineBox_->setMinimumContentsLength(16);
  connect(metricBox_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0 && i != metric_) {
      metric_ = i;
      rebuildPlot();
    }
  });
  // The three axes every run has, then every metric (the Y picker's keys) as an X axis too.
  connect(xBox_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0 && i < 3) setXAxis(XAxis(i));
    else if (i >= 3) setXAxisKey(xBox_->itemText(i));
  });
  connect(baselineBox_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0) setBaseline(i);
  });

  // The title (the runs' names) wraps on a line of its own, and the boxes may shrink below their longest
  // item: otherwise this row alone made the window wider than a 1366-pixel screen.
  title_->setWordWrap(true);
  for (QComboBox* box : {metricBox_, xBox_, baselineBox_, groupBox_, bandBox_})
    box->setMinimumWidth(box->fontMetrics().averageCharWidth() * 8);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Metric"), this));
  controls->addWidget(metricBox_);
  controls->addWidget(new QLabel(tr("X axis"), this));
  controls->addWidget(xBox_);
  controls->addWidget(new QLabel(tr("Baseline"), this));
  controls->addWidget(baselineBox_);
  controls->addWidget(new QLabel(tr("Group"), this));
  controls->addWidget(groupBox_);
  controls->addWidget(patternEdit_);
  controls->addWidget(bandBox_);
  controls->addStretch(1);

  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(320, 140);  // the runs page fits a 1366×768 screen
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  scoreTable_ = makeTable(this);
  scoreTable_->setObjectName(QStringLiteral("scoreboard"));
  diffTable_ = makeTable(this);
  diffTable_->setObjectName(QStringLiteral("configDiff"));

  auto* top = new QSplitter(Qt::Horizontal, this);
  top->addWidget(plot_);
  samples_ = new SampleCompare(this);
  summary_ = new SummaryTable(this);
  auto* side = new QTabWidget(this);
  side->setObjectName(QStringLiteral("compareTabs"));
  side->addTab(diffTable_, tr("Config differences"));
  side->addTab(summary_, tr("Metrics"));
  side->addTab(samples_, tr("Samples"));
  top->addWidget(side);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);
  top->setSizes({650, 350});  // the plot first: a wide diff table would otherwise claim half
  // The step profile and the waterfall share a tab pane beside the scoreboard: side by side in a third of
  // the width each, their labels and legends overlapped.
  phaseBars_ = new PhaseBars(this);
  waterfall_ = new SpeedupWaterfall(this);
  auto* charts = new QTabWidget(this);
  charts->setObjectName(QStringLiteral("compareCharts"));
  charts->addTab(phaseBars_, tr("Step profile"));
  charts->addTab(waterfall_, tr("Speed-up waterfall"));
  // The waterfall measures tok/s or, for runs with a train.target_val_loss, the time to reach it (issue 27).
  waterfallBy_ = new QComboBox(this);
  waterfallBy_->setObjectName(QStringLiteral("waterfallBy"));
  waterfallBy_->addItem(tr("by tok/s"));
  waterfallBy_->addItem(tr("by time to target"));
  waterfallBy_->setToolTip(
      tr("Each rung's speed-up in tokens per second, or in training time to the runs' "
         "train.target_val_loss (first run's time / this run's; a run that did not reach it "
         "has no bar)"));
  charts->setCornerWidget(waterfallBy_);
  connect(waterfallBy_, &QComboBox::currentIndexChanged, this, [this] { rebuildScoreboard(); });
  auto* bottom = new QSplitter(Qt::Horizontal, this);
  bottom->addWidget(scoreTable_);
  bottom->addWidget(charts);
  bottom->setStretchFactor(0, 3);
  bottom->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({620, 300});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(title_);
  layout->addLayout(controls);
  layout->addWidget(split, 1);
}

QColor CompareView::colorOf(int runIndex) const { return kPalette[runIndex % 10]; }

void CompareView::setRuns(tokamak::RunStore& store, const QList<qint64>& ids) {
  // Read everything first: a run deleted meanwhile throws here and leaves the view as it was.
  std::vector<std::vector<tokamak::MetricRow>> metrics;
  std::vector<tokamak::ScoreInput> inputs;
  std::vector<std::vector<tokamak::SampleRow>> samples;
  std::vector<tokamak::GroupInput> members;
  for (qint64 id : ids) {
    inputs.push_back(tokamak::score_input(store, id));
    members.push_back(tokamak::group_input(store.run(id)));
    metrics.push_back(store.metrics(id));
    samples.push_back(store.samples(id));
  }
  const bool sameRuns = ids == ids_;
  ids_ = ids;
  metrics_ = std::move(metrics);
  inputs_ = std::move(inputs);
  members_ = std::move(members);
  grouping_ = tokamak::group_runs(members_, group_);
  if (!sameRuns) {
    baseline_ = 0;
    QSignalBlocker block(baselineBox_);
    baselineBox_->clear();
    for (const auto& in : inputs_) baselineBox_->addItem(qs(in.label));
    baselineBox_->setCurrentIndex(0);
  }
  title_->setText(tr("Comparing %n run(s)", nullptr, int(ids_.size())));
  rebuildMetricChoices();
  rebuildPlot();
  rebuildScoreboard();
  rebuildDiff();
  QStringList labels;
  for (const auto& in : inputs_) labels << qs(in.label);
  samples_->setRuns(labels, samples);
  summary_->setRuns(labels, metrics_);
}

void CompareView::reload(tokamak::RunStore& store) {
  if (!ids_.isEmpty()) setRuns(store, ids_);
}

void CompareView::clear() {
  ids_.clear();
  metrics_.clear();
  inputs_.clear();
  members_.clear();
  grouping_ = {};
  board_ = {};
  QSignalBlocker block(baselineBox_);
  baselineBox_->clear();
  title_->setText(tr("Select two or more runs and press Compare."));
  rebuildMetricChoices();
  rebuildPlot();
  scoreTable_->clear();
  scoreTable_->setRowCount(0);
  phaseBars_->setRuns({});
  waterfall_->setRungs({});
  samples_->setRuns({}, {});
  summary_->setRuns({}, {});
  diffTable_->clear();
  diffTable_->setRowCount(0);
}

void CompareView::setMetric(PlotMetric metric) {
  metric_ = int(metric);
  if (metricBox_->currentIndex() != metric_) metricBox_->setCurrentIndex(metric_);
  rebuildPlot();
}

bool CompareView::setMetricKey(const QString& key) {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].key == key.toStdString()) {
      metric_ = int(i);
      if (metricBox_->currentIndex() != metric_) metricBox_->setCurrentIndex(metric_);
      rebuildPlot();
      return true;
    }
  return false;
}

QString CompareView::metricKey() const { return qs(axes_.at(size_t(metric_)).key); }

QStringList CompareView::metricKeys() const {
  QStringList keys;
  for (const YAxis& y : axes_) keys << qs(y.key);
  return keys;
}

// The five usual metrics first, then every other key the compared runs recorded (tokens and wall time are
// X axes, not curves). The current choice is kept when it is still offered.
void CompareView::rebuildMetricChoices() {
  const std::string current = axes_.empty() ? std::string() : axes_[size_t(metric_)].key;
  axes_ = {{"train_loss", 1, tr("train loss")},
           {"val_loss", 1, tr("val loss")},
           {"tok_s", 1, tr("tokens / s")},
           {"mfu", 100, tr("MFU (%)")},
           {"mem_peak", 1.0 / (1024 * 1024), tr("peak memory (MiB)")}};
  QStringList names = {tr("Train loss"), tr("Val loss"), tr("tok/s"), tr("MFU"), tr("Peak memory")};
  for (const auto& run : metrics_)
    for (const tokamak::MetricRow& row : run)
      for (const tokamak::MetricValue& v : row.values) {
        if (v.key == "tokens" || v.key == "wall_s") continue;
        if (std::any_of(axes_.begin(), axes_.end(), [&](const YAxis& y) { return y.key == v.key; })) continue;
        axes_.push_back({v.key, 1, qs(v.key)});
        names << qs(v.key);
      }
  metric_ = 0;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].key == current) metric_ = int(i);
  QSignalBlocker block(metricBox_);
  metricBox_->clear();
  metricBox_->addItems(names);
  metricBox_->setCurrentIndex(metric_);
  QSignalBlocker blockX(xBox_);
  xBox_->clear();
  xBox_->addItems({tr("Step"), tr("Tokens"), tr("Wall time")});
  bool keyOffered = false;
  for (const YAxis& y : axes_) {
    xBox_->addItem(qs(y.key));
    if (y.key == xKey_) keyOffered = true, xBox_->setCurrentIndex(xBox_->count() - 1);
  }
  if (!keyOffered) xKey_.clear(), xBox_->setCurrentIndex(int(xAxis_));
}

void CompareView::setXAxis(XAxis axis) {
  xAxis_ = axis;
  xKey_.clear();
  if (xBox_->currentIndex() != int(axis)) xBox_->setCurrentIndex(int(axis));
  rebuildPlot();
}

bool CompareView::setXAxisKey(const QString& key) {
  const int i = xBox_->findText(key);
  if (i < 3) return false;  // not offered (the first three are the built-in axes' names)
  xKey_ = key.toStdString();
  if (xBox_->currentIndex() != i) xBox_->setCurrentIndex(i);
  rebuildPlot();
  return true;
}

void CompareView::setBaseline(int runIndex) {
  if (runIndex < 0 || runIndex >= ids_.size()) return;
  baseline_ = runIndex;
  if (baselineBox_->currentIndex() != runIndex) baselineBox_->setCurrentIndex(runIndex);
  rebuildScoreboard();
}

bool CompareView::setGrouping(const QString& spec) {
  tokamak::GroupSpec parsed;
  try {
    parsed = tokamak::parse_group_spec(spec.toStdString());
  } catch (const std::exception& e) {
    groupError_ = QString::fromUtf8(e.what());
    patternEdit_->setToolTip(groupError_);
    patternEdit_->setStyleSheet(QStringLiteral("color: #c0392b"));
    return false;
  }
  groupError_.clear();
  patternEdit_->setStyleSheet({});
  group_ = parsed;
  grouping_ = tokamak::group_runs(members_, group_);
  {
    const QSignalBlocker blockBox(groupBox_), blockEdit(patternEdit_);
    groupBox_->setCurrentIndex(int(group_.by));
    if (group_.by == tokamak::GroupSpec::By::kName) patternEdit_->setText(qs(group_.pattern));
  }
  patternEdit_->setVisible(group_.by == tokamak::GroupSpec::By::kName);
  bandBox_->setEnabled(group_.by != tokamak::GroupSpec::By::kNone);
  rebuildPlot();
  rebuildScoreboard();
  return true;
}

QString CompareView::grouping() const {
  switch (group_.by) {
    case tokamak::GroupSpec::By::kSeed:
      return QStringLiteral("seed");
    case tokamak::GroupSpec::By::kTag:
      return QStringLiteral("tag");
    case tokamak::GroupSpec::By::kName:
      return QStringLiteral("name:") + qs(group_.pattern);
    case tokamak::GroupSpec::By::kNone:
      break;
  }
  return QStringLiteral("none");
}

void CompareView::applyGroupControls() {
  const QString kind = groupBox_->currentData().toString();
  patternEdit_->setVisible(kind == QLatin1String("name"));
  if (kind != QLatin1String("name")) return void(setGrouping(kind));
  const QString pattern = patternEdit_->text().isEmpty() ? patternEdit_->placeholderText() : patternEdit_->text();
  setGrouping(QStringLiteral("name:") + pattern);
}

void CompareView::setBand(BandKind band) {
  band_ = band;
  if (bandBox_->currentIndex() != int(band)) bandBox_->setCurrentIndex(int(band));
  rebuildPlot();
}

void CompareView::rebuildPlot() {
  plot_->clearGraphs();
  const YAxis& y = axes_.at(size_t(metric_));
  const QString xLabel[] = {tr("step"), tr("tokens"), tr("wall time (s)")};
  std::vector<QVector<double>> xsOf(metrics_.size()), vsOf(metrics_.size());
  for (size_t r = 0; r < metrics_.size(); ++r)
    for (const tokamak::MetricRow& row : metrics_[r]) {
      double x = !xKey_.empty()          ? row[xKey_]
                 : xAxis_ == XAxis::Step ? double(row.step)
                                         : row[xAxis_ == XAxis::Tokens ? "tokens" : "wall_s"];
      double v = row[y.key];
      if (std::isnan(x) || std::isnan(v)) continue;  // not reported at this step (val loss: only at evals)
      xsOf[r] << x;
      vsOf[r] << v * y.scale;
    }
  // A group drawn as one curve: the mean, and a band (min to max, or one standard deviation either side)
  // where every run of the group reported (not with a metric as X: a cloud has no "same x").
  const bool grouped =
      group_.by != tokamak::GroupSpec::By::kNone && xKey_.empty() && grouping_.group.size() == metrics_.size();
  const std::vector<int> noGroups(metrics_.size(), -1);
  const std::vector<int>& group = grouped ? grouping_.group : noGroups;
  const std::vector<int>& size = grouping_.size;
  std::vector<bool> drawn(size.size(), false);
  for (size_t r = 0; r < metrics_.size(); ++r) {
    const QVector<double>&xs = xsOf[r], &vs = vsOf[r];
    if (group[r] >= 0 && size[size_t(group[r])] > 1) {
      if (drawn[size_t(group[r])]) continue;
      drawn[size_t(group[r])] = true;
      std::vector<std::vector<std::pair<double, double>>> members;
      for (size_t m = 0; m < metrics_.size(); ++m)
        if (group[m] == group[r]) {
          members.emplace_back();
          for (int i = 0; i < xsOf[m].size(); ++i) members.back().emplace_back(xsOf[m][i], vsOf[m][i]);
        }
      const tokamak::Band band = tokamak::band_over_runs(members);
      const QVector<double> bx(band.x.begin(), band.x.end());
      QVector<double> low(band.min.begin(), band.min.end()), high(band.max.begin(), band.max.end());
      if (band_ == BandKind::Std)
        for (int i = 0; i < bx.size(); ++i)
          low[i] = band.mean[size_t(i)] - band.std[size_t(i)], high[i] = band.mean[size_t(i)] + band.std[size_t(i)];
      const QColor c = colorOf(int(r));
      const QString name = tr("%1 ×%2").arg(qs(grouping_.names[size_t(group[r])])).arg(members.size());
      QCPGraph* lo = plot_->addGraph();
      lo->setName(name + (band_ == BandKind::Std ? tr(" (mean − std)") : tr(" (min)")));
      lo->setPen(Qt::NoPen);
      lo->setData(bx, low, true);
      lo->removeFromLegend();
      QCPGraph* hi = plot_->addGraph();
      hi->setName(name + (band_ == BandKind::Std ? tr(" (mean + std)") : tr(" (max)")));
      hi->setPen(Qt::NoPen);
      hi->setBrush(QColor(c.red(), c.green(), c.blue(), 60));
      hi->setChannelFillGraph(lo);  // the band: filled from max down to min
      hi->setData(bx, high, true);
      hi->removeFromLegend();
      QCPGraph* mean = plot_->addGraph();
      mean->setName(name + tr(" (mean)"));
      mean->setPen(QPen(c, 2));
      mean->setData(bx, QVector<double>(band.mean.begin(), band.mean.end()), true);
      continue;
    }
    QCPGraph* g = plot_->addGraph();
    g->setName(qs(inputs_[r].label));
    g->setPen(QPen(colorOf(int(r)), 2));
    // Sparse series (val loss) would be invisible as lines between a few points: mark every point.
    if (xs.size() < 40) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    if (!xKey_.empty()) {
      // A metric against a metric is a cloud, not a curve: points only (the graph orders them by x).
      g->setLineStyle(QCPGraph::lsNone);
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    }
    g->setData(xs, vs, xKey_.empty());
  }
  plot_->xAxis->setLabel(xKey_.empty() ? xLabel[int(xAxis_)] : qs(xKey_));
  plot_->yAxis->setLabel(y.label);
  plot_->rescaleAxes();
  plot_->replot();
}

void CompareView::rebuildScoreboard() {
  board_ = tokamak::build_scoreboard(inputs_, size_t(baseline_));
  if (group_.by != tokamak::GroupSpec::By::kNone && grouping_.group.size() == inputs_.size())
    tokamak::add_group_rows(board_, grouping_);
  QStringList headers = {tr("Run"), tr("Setup"),       tr("tok/s"),          tr("Speedup"),
                         tr("MFU"), tr("Peak memory"), tr("Final val loss"), tr("Best val loss")};
  const bool target = tokamak::has_target(board_);
  if (target) headers << tr("Time to target") << tr("Steps to target") << tr("Time speedup");
  scoreTable_->clear();
  scoreTable_->setColumnCount(headers.size());
  scoreTable_->setHorizontalHeaderLabels(headers);
  const int runs = int(board_.rows.size());
  scoreTable_->setRowCount(runs + int(board_.groups.size()));
  for (int r = 0; r < int(board_.rows.size()); ++r) {
    const tokamak::ScoreRow& row = board_.rows[size_t(r)];
    auto* label = cell(qs(row.label) + (size_t(r) == board_.baseline ? tr(" (baseline)") : QString()));
    label->setForeground(colorOf(r));
    scoreTable_->setItem(r, 0, label);
    scoreTable_->setItem(r, 1, cell(qs(row.setup)));
    scoreTable_->setItem(r, 2, cell(qs(tokamak::format_rate(row.tok_s)), true));
    scoreTable_->setItem(r, 3, cell(fmt("%.2f×", row.speedup), true));
    scoreTable_->setItem(r, 4, cell(fmt("%.1f%%", row.mfu * 100), true));
    scoreTable_->setItem(r, 5, cell(qs(tokamak::format_bytes(row.peak_mem)), true));
    scoreTable_->setItem(r, 6, cell(fmt("%.4f", row.final_val_loss), true));
    scoreTable_->setItem(r, 7, cell(fmt("%.4f", row.best_val_loss), true));
    if (target) {
      scoreTable_->setItem(r, 8, cell(qs(tokamak::format_time_to_target(row.time_to_target_s, row.target)), true));
      scoreTable_->setItem(r, 9, cell(fmt("%.0f", row.steps_to_target), true));
      scoreTable_->setItem(r, 10, cell(fmt("%.2f×", row.target_speedup), true));
    }
  }
  // A row per group: the means of its runs, tok/s with its spread; in italics, in its curve's colour.
  for (int k = 0; k < int(board_.groups.size()); ++k) {
    const tokamak::ScoreGroup& g = board_.groups[size_t(k)];
    const tokamak::ScoreRow& m = g.mean;
    const int r = runs + k;
    auto* label = cell(tr("%1 (mean)").arg(qs(g.label)));
    label->setForeground(colorOf(int(g.members.front())));
    QFont italic = label->font();
    italic.setItalic(true);
    label->setFont(italic);
    scoreTable_->setItem(r, 0, label);
    scoreTable_->setItem(r, 1, cell(qs(m.setup)));
    scoreTable_->setItem(
        r, 2,
        cell(qs(tokamak::format_rate(m.tok_s)) + QStringLiteral(" ± ") + qs(tokamak::format_rate(g.tok_s_std)), true));
    scoreTable_->setItem(r, 3, cell(fmt("%.2f×", m.speedup), true));
    scoreTable_->setItem(r, 4, cell(fmt("%.1f%%", m.mfu * 100), true));
    scoreTable_->setItem(r, 5, cell(qs(tokamak::format_bytes(m.peak_mem)), true));
    scoreTable_->setItem(r, 6, cell(fmt("%.4f", m.final_val_loss), true));
    scoreTable_->setItem(r, 7, cell(fmt("%.4f", m.best_val_loss), true));
    if (target) {
      scoreTable_->setItem(
          r, 8,
          cell(qs(tokamak::format_time_to_target(m.time_to_target_s, m.target)) + QStringLiteral(" ± ") +
                   fmt("%.1f s", g.time_to_target_std) + tr(" (%1/%2 reached)").arg(g.reached).arg(g.members.size()),
               true));
      scoreTable_->setItem(r, 9, cell(fmt("%.0f", m.steps_to_target), true));
      scoreTable_->setItem(r, 10, cell(fmt("%.2f×", m.target_speedup), true));
    }
    for (int c = 1; c < headers.size(); ++c) scoreTable_->item(r, c)->setFont(italic);
  }
  scoreTable_->resizeColumnsToContents();
  // Under the bars, more than three full labels overlap in the half-width pane: then the run ids ("#3") only,
  // which the scoreboard beside them spells out.
  const auto barLabel = [&](const tokamak::ScoreRow& row) {
    return board_.rows.size() > 3 ? qs(row.label).section(QLatin1Char(' '), 0, 0) : qs(row.label);
  };
  std::vector<PhaseBars::Run> bars;
  for (const tokamak::ScoreRow& row : board_.rows) bars.push_back({barLabel(row), row.phase_ms});
  phaseBars_->setRuns(bars);
  // Grouped runs (a ladder run with several seeds) are one rung each, at their mean, where their first run stands;
  // a run in no group is a rung of its own. Named by the part after the ladder's "name/" prefix, without "×N".
  std::vector<SpeedupWaterfall::Rung> rungs;
  const bool byTarget = waterfallBy_->currentIndex() == 1;
  const auto rate = [byTarget](const tokamak::ScoreRow& row) {
    return byTarget ? 1.0 / row.time_to_target_s : row.tok_s;
  };
  std::vector<int> groupOf(board_.rows.size(), -1);
  for (size_t k = 0; k < board_.groups.size(); ++k)
    for (size_t member : board_.groups[k].members) groupOf[member] = int(k);
  std::vector<bool> drawn(board_.groups.size(), false);
  for (size_t r = 0; r < board_.rows.size(); ++r) {
    const int k = groupOf[r];
    if (k < 0) {
      rungs.push_back({barLabel(board_.rows[r]), rate(board_.rows[r])});
    } else if (!drawn[size_t(k)]) {
      drawn[size_t(k)] = true;
      const tokamak::ScoreGroup& g = board_.groups[size_t(k)];
      rungs.push_back({qs(g.label).section(QLatin1Char('/'), -1).section(QStringLiteral(" ×"), 0, 0), rate(g.mean)});
    }
  }
  waterfall_->setMeasure(byTarget ? tr("time to target") : tr("tok/s"));
  waterfall_->setRungs(rungs);
}

void CompareView::rebuildDiff() {
  diffTable_->clear();
  QStringList headers = {tr("Config key")};
  for (const auto& in : inputs_) headers << qs(in.label);
  diffTable_->setColumnCount(headers.size());
  diffTable_->setHorizontalHeaderLabels(headers);
  diffTable_->setRowCount(int(board_.diff_keys.size()));
  for (int k = 0; k < int(board_.diff_keys.size()); ++k) {
    diffTable_->setItem(k, 0, cell(qs(board_.diff_keys[size_t(k)])));
    for (int r = 0; r < int(board_.diff_values[size_t(k)].size()); ++r)
      diffTable_->setItem(k, r + 1, cell(qs(board_.diff_values[size_t(k)][size_t(r)])));
  }
  diffTable_->resizeColumnsToContents();
  if (board_.diff_keys.empty() && !inputs_.empty()) diffTable_->setToolTip(tr("The runs' configs are identical."));
}

}  // namespace tokamak::ui
