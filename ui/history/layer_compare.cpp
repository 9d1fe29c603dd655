// LayerCompare (see layer_compare.h).
#include "ui/history/layer_compare.h"

#include <QComboBox>
#include <QGuiApplication>
#include <QScreen>
#include <QToolButton>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>
#include <algorithm>

#include "engine/base/run/layer_metrics.h"
#include "ui/plots/layer_heatmap.h"

namespace tokamak::ui {
namespace {

bool measuredLayers(const std::vector<tokamak::MetricRow>& rows) {
  for (const tokamak::MetricRow& r : rows)
    for (const tokamak::MetricValue& v : r.values)
      if (tokamak::is_layer_metric(v.key)) return true;
  return false;
}

}  // namespace

LayerCompare::LayerCompare(QWidget* parent) : QWidget(parent) {
  setObjectName("layerCompare");
  stat_ = new QComboBox;
  stat_->setObjectName("layerCompareStat");
  for (const tokamak::LayerStat& s : tokamak::layer_stats()) {
    stat_->addItem(tr(s.label), QString(s.id));
    stat_->setItemData(stat_->count() - 1, tr(s.help), Qt::ToolTipRole);
  }
  stat_->setCurrentIndex(stat_->findData(QStringLiteral("g_rms")));
  stat_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  stat_->setMinimumContentsLength(6);
  note_ = new QLabel;
  note_->setWordWrap(true);
  // One row of controls (the statistic, then each side's run) over the two maps: the compare tabs' height is the
  // runs page's minimum, which a 1366×768 screen holds.
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Statistic")));
  top->addWidget(stat_);
  auto* larger = new QToolButton;
  larger->setObjectName("layerCompareLarger");
  larger->setText(QStringLiteral("⤢"));  // a glyph, not a word: the runs page's least width is the window's
  larger->setToolTip(tr("Larger: these runs' layers in a window of their own"));
  connect(larger, &QToolButton::clicked, this, [this] { openWindow(); });
  auto* grid = new QGridLayout;
  grid->setSpacing(2);
  for (int side = 0; side < 2; ++side) {
    runs_[side] = new QComboBox;
    runs_[side]->setObjectName(side == 0 ? "layerRunLeft" : "layerRunRight");
    runs_[side]->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    runs_[side]->setMinimumContentsLength(4);  // the runs page's least width is the window's: these boxes give way
    maps_[side] = new LayerHeatmap(/*ownPicker=*/false);
    maps_[side]->setMinimumSize(120, 60);  // the compare tabs' height is the runs page's minimum: theirs stays small
    top->addWidget(runs_[side], 1);
    grid->addWidget(maps_[side], 0, side);
    connect(runs_[side], &QComboBox::currentIndexChanged, this, [this, side] { show(side); });
  }
  grid->setRowStretch(0, 1);
  connect(stat_, &QComboBox::currentIndexChanged, this, [this] {
    for (LayerHeatmap* m : maps_) m->setStat(stat_->currentData().toString().toStdString());
    shareScale();
  });
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  layout->addLayout(top);
  layout->addWidget(note_);
  layout->addLayout(grid, 1);
  top->addWidget(larger);
}

LayerCompare* LayerCompare::openWindow() {
  if (window_) window_->close();
  auto* window = new QWidget(this, Qt::Window);
  window->setAttribute(Qt::WA_DeleteOnClose);
  window->setWindowTitle(tr("Layers"));
  auto* view = new LayerCompare(window);
  auto* layout = new QVBoxLayout(window);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(view);
  view->setRuns(labels_, metrics_);
  for (int side = 0; side < 2; ++side) view->runs_[side]->setCurrentIndex(runs_[side]->currentIndex());
  view->stat_->setCurrentIndex(stat_->currentIndex());
  const QRect screen =
      QGuiApplication::primaryScreen() ? QGuiApplication::primaryScreen()->availableGeometry() : QRect(0, 0, 1366, 768);
  window->resize(screen.width() * 9 / 10, screen.height() * 9 / 10);
  window->show();
  window_ = window;
  return view;
}

void LayerCompare::setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::MetricRow>>& metrics) {
  metrics_ = metrics;
  labels_ = labels;
  // The first two runs that measured their layers, else the first two.
  std::vector<int> measured;
  for (size_t i = 0; i < metrics_.size(); ++i)
    if (measuredLayers(metrics_[i])) measured.push_back(int(i));
  note_->setText(measured.empty() && !labels.isEmpty()
                     ? tr("None of these runs measured its layers: train with metrics.layers_every=0 (the default) "
                          "to see them here.")
                     : QString());
  note_->setVisible(!note_->text().isEmpty());
  for (int side = 0; side < 2; ++side) {
    const QSignalBlocker quiet(runs_[side]);
    runs_[side]->clear();
    runs_[side]->addItems(labels);
    const int pick = side < int(measured.size()) ? measured[size_t(side)] : std::min(side, int(labels.size()) - 1);
    runs_[side]->setCurrentIndex(pick);
    show(side);
  }
}

// One colour scale for both maps: the same colour is the same value on either side.
void LayerCompare::shareScale() {
  std::pair<double, double> range{0, 0};
  for (LayerHeatmap* m : maps_) m->setSharedRange({0, 0});
  const auto a = maps_[0]->valueRange(), b = maps_[1]->valueRange();
  range = {std::min(a.first, b.first), std::max(a.second, b.second)};
  if (range.first < range.second)
    for (LayerHeatmap* m : maps_) m->setSharedRange(range);
}

void LayerCompare::show(int side) {
  const int run = runs_[side]->currentIndex();
  maps_[side]->setStat(stat_->currentData().toString().toStdString());
  if (run < 0 || size_t(run) >= metrics_.size()) {
    maps_[side]->clear();
    maps_[side]->setTitle(QString());
    return;
  }
  maps_[side]->setRows(metrics_[size_t(run)]);
  maps_[side]->setTitle(maps_[side]->hasData() ? runs_[side]->currentText()
                                               : tr("%1: no layers measured").arg(runs_[side]->currentText()));
  shareScale();
}

QString LayerCompare::note() const { return note_->text(); }

}  // namespace tokamak::ui
