// The compare view (see compare_view.h): its parts laid out, the runs read from the store and handed to them.
#include "ui/history/compare_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "ui/plots/phase_bars.h"
#include "ui/plots/speed_of_light_bars.h"
#include "ui/plots/qcp.h"
#include "ui/plots/speedup_waterfall.h"
#include "ui/history/config_diff.h"
#include "ui/history/layer_compare.h"
#include "ui/history/run_colors.h"
#include "ui/history/sample_compare.h"
#include "ui/history/scoreboard_charts.h"
#include "ui/history/scoreboard_table.h"
#include "ui/history/summary_table.h"
#include "ui/history/table_cells.h"

namespace tokamak::ui {

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
  buildControls();
  QHBoxLayout* controls = layOutControls();
  QSplitter* top = buildPlotAndTabs();
  QTabWidget* charts = buildCharts();
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

void CompareView::buildControls() {
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
}

QHBoxLayout* CompareView::layOutControls() {
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
  return controls;
}

QSplitter* CompareView::buildPlotAndTabs() {
  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(320, 140);  // the runs page fits a 1366×768 screen
  plot_->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  scoreTable_ = makeReadOnlyTable(this);
  scoreTable_->setObjectName(QStringLiteral("scoreboard"));
  diffTable_ = makeReadOnlyTable(this);
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
  layers_ = new LayerCompare(this);
  side->addTab(layers_, tr("Layers"));
  top->addWidget(side);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);
  top->setSizes({650, 350});  // the plot first: a wide diff table would otherwise claim half
  return top;
}

QTabWidget* CompareView::buildCharts() {
  // The step profile and the waterfall share a tab pane beside the scoreboard: side by side in a third of
  // the width each, their labels and legends overlapped.
  phaseBars_ = new PhaseBars(this);
  waterfall_ = new SpeedupWaterfall(this);
  auto* charts = new QTabWidget(this);
  charts->setObjectName(QStringLiteral("compareCharts"));
  charts->addTab(phaseBars_, tr("Step profile"));
  charts->addTab(waterfall_, tr("Speed-up waterfall"));
  speedOfLight_ = new SpeedOfLightBars(this);
  charts->addTab(speedOfLight_, tr("Speed of light"));
  // The waterfall measures tok/s or, for runs with a eval.target_val_loss, the time to reach it.
  waterfallBy_ = new QComboBox(this);
  waterfallBy_->setObjectName(QStringLiteral("waterfallBy"));
  waterfallBy_->addItem(tr("by tok/s"));
  waterfallBy_->addItem(tr("by time to target"));
  waterfallBy_->setToolTip(
      tr("Each rung's speed-up in tokens per second, or in training time to the runs' "
         "eval.target_val_loss (first run's time / this run's; a run that did not reach it "
         "has no bar)"));
  charts->setCornerWidget(waterfallBy_);
  connect(waterfallBy_, &QComboBox::currentIndexChanged, this, [this] { rebuildScoreboard(); });
  return charts;
}

QColor CompareView::colorOf(int runIndex) const { return runColor(runIndex); }

void CompareView::setRuns(tokamak::RunStore& store, const QList<qint64>& ids) {
  // Read everything first: a run deleted meanwhile throws here and leaves the view as it was.
  std::vector<std::vector<tokamak::MetricRow>> metrics;
  std::vector<tokamak::ScoreInput> inputs;
  std::vector<std::vector<tokamak::SampleRow>> samples;
  std::vector<tokamak::GroupInput> members;
  std::vector<tokamak::SpeedOfLightRecord> speedOfLight;
  for (qint64 id : ids) {
    speedOfLight.push_back(store.speed_of_light(id));
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
  speedOfLightRecords_ = std::move(speedOfLight);
  grouping_ = tokamak::group_runs(members_, group_);
  if (!sameRuns) {
    baseline_ = 0;
    QSignalBlocker block(baselineBox_);
    baselineBox_->clear();
    baselineBox_->addItems(runLabels());
    baselineBox_->setCurrentIndex(0);
  }
  title_->setText(tr("Comparing %n run(s)", nullptr, int(ids_.size())));
  rebuildMetricChoices();
  rebuildPlot();
  rebuildScoreboard();
  rebuildDiff();
  const QStringList labels = runLabels();
  samples_->setRuns(labels, samples);
  summary_->setRuns(labels, metrics_);
  layers_->setRuns(labels, metrics_);
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
  speedOfLightRecords_.clear();
  speedOfLight_->setRuns({});
  waterfall_->setRungs({});
  samples_->setRuns({}, {});
  summary_->setRuns({}, {});
  layers_->setRuns({}, {});
  diffTable_->clear();
  diffTable_->setRowCount(0);
}

void CompareView::rebuildPlot() {
  CurveRequest request{axes_.at(size_t(metric_)), int(xAxis_), xKey_, nullptr, band_ == BandKind::Std};
  if (group_.by != tokamak::GroupSpec::By::kNone) request.groups = &grouping_;
  drawCurves(plot_, metrics_, runLabels(), request);
}

void CompareView::rebuildScoreboard() {
  board_ = tokamak::build_scoreboard(inputs_, size_t(baseline_));
  if (group_.by != tokamak::GroupSpec::By::kNone && grouping_.group.size() == inputs_.size())
    tokamak::add_group_rows(board_, grouping_);
  showScoreboard(scoreTable_, board_);
  phaseBars_->setRuns(profileBars(board_));
  std::vector<SpeedOfLightBars::Run> light;
  for (size_t i = 0; i < speedOfLightRecords_.size() && i < inputs_.size(); ++i)
    light.push_back({QString::fromStdString(inputs_[i].label), colorOf(int(i)), speedOfLightRecords_[i]});
  speedOfLight_->setRuns(light);
  const bool byTarget = waterfallBy_->currentIndex() == 1;
  waterfall_->setMeasure(byTarget ? tr("time to target") : tr("tok/s"));
  waterfall_->setRungs(waterfallRungs(board_, byTarget));
}

void CompareView::rebuildDiff() { showConfigDiff(diffTable_, board_, runLabels()); }

QStringList CompareView::runLabels() const {
  QStringList labels;
  for (const auto& in : inputs_) labels << QString::fromStdString(in.label);
  return labels;
}

}  // namespace tokamak::ui
