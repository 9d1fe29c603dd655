// LivePlots: the metric grid and its shared controls (see live_plots.h).
#include "ui/plots/live_plots.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "ui/plots/metric_plot.h"

namespace tokamak::ui {
namespace {
// Series colours are the one thing not taken from the palette: they must tell curves apart on light and dark.
const QColor kBlue(31, 119, 180), kOrange(255, 127, 14), kGreen(44, 160, 44), kRed(214, 39, 40), kPurple(148, 103, 189);
}

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
  smoothing_->setToolTip(tr("Exponential moving average drawn over the raw curve (0 = off); the raw curve stays, lighter"));
  auto* follow = new QPushButton(tr("Follow data"));
  follow->setToolTip(tr("Wheel zooms, drag pans; this (or a double click on a plot) returns to the full range"));

  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("X axis")));
  controls->addWidget(xAxis_);
  controls->addWidget(logY_);
  controls->addWidget(new QLabel(tr("Smoothing")));
  controls->addWidget(smoothing_);
  controls->addWidget(follow);
  controls->addStretch(1);

  auto* grid = new QGridLayout;
  grid->setSpacing(2);
  loss_ = add(tr("Loss"), tr("cross-entropy"));
  speed_ = add(tr("Throughput"), tr("tokens/s"));
  mfu_ = add(tr("MFU"), tr("% of peak"));
  memory_ = add(tr("Memory"), tr("MB"));
  lr_ = add(tr("Learning rate"), QString());
  gradNorm_ = add(tr("Grad norm"), tr("before clipping"));
  for (int i = 0; i < plots_.size(); ++i) grid->addWidget(plots_[i], i / 3, i % 3);
  train_ = loss_->addSeries(tr("train"), kBlue);
  val_ = loss_->addSeries(tr("val"), kOrange);
  tokS_ = speed_->addSeries(tr("tok/s"), kGreen);
  mfuS_ = mfu_->addSeries(tr("MFU"), kPurple);
  alloc_ = memory_->addSeries(tr("allocated"), kBlue);
  reserved_ = memory_->addSeries(tr("reserved"), kGreen);
  peak_ = memory_->addSeries(tr("peak"), kRed);
  lrS_ = lr_->addSeries(tr("lr"), kBlue);
  normS_ = gradNorm_->addSeries(tr("grad norm"), kRed);
  lr_->setSmoothing(0);  // the schedule is exact: nothing to smooth

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
  connect(follow, &QPushButton::clicked, this, [this] {
    for (MetricPlot* p : plots_) p->followData();
  });
}

MetricPlot* LivePlots::add(const QString& title, const QString& unit) {
  auto* p = new MetricPlot(title, unit);
  plots_ << p;
  return p;
}

void LivePlots::appendSteps(const std::vector<StepEvent>& steps) {
  for (const StepEvent& e : steps) {
    const double s = static_cast<double>(e.step), t = static_cast<double>(e.tokens), w = e.wall_s;
    loss_->append(train_, s, t, w, e.loss);
    speed_->append(tokS_, s, t, w, e.tok_s);
    if (e.mfu >= 0) mfu_->append(mfuS_, s, t, w, 100.0 * e.mfu);  // no peak FLOP/s known (CPU): no MFU
    if (e.mem_allocated > 0) memory_->append(alloc_, s, t, w, e.mem_allocated / 1e6);
    if (e.mem_reserved > 0) memory_->append(reserved_, s, t, w, e.mem_reserved / 1e6);
    if (e.mem_peak > 0) memory_->append(peak_, s, t, w, e.mem_peak / 1e6);
    lr_->append(lrS_, s, t, w, e.lr);
    gradNorm_->append(normS_, s, t, w, e.grad_norm);
  }
}

void LivePlots::appendEvals(const std::vector<EvalEvent>& evals) {
  for (const EvalEvent& e : evals)
    loss_->append(val_, static_cast<double>(e.step), static_cast<double>(e.tokens), e.wall_s, e.val_loss);
}

void LivePlots::flush() {
  for (MetricPlot* p : plots_) p->flush();
}

void LivePlots::clear() {
  for (MetricPlot* p : plots_) p->clear();
}

int LivePlots::trainPoints() const { return loss_->pointCount(train_); }
int LivePlots::valPoints() const { return loss_->pointCount(val_); }

}  // namespace tokamak::ui
