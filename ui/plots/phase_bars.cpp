// PhaseBars (see phase_bars.h): seven stacked QCPBars over a text ticker with the runs' labels.
#include "ui/plots/phase_bars.h"

#include <algorithm>
#include <cmath>

namespace tokamak::ui {
namespace {
// One colour per phase, in step order: compute (forward, head, backward) in the strong colours, waiting in the
// pale.
const QColor kPhaseColor[tokamak::kPhaseCount] = {QColor(0xbcbd22), QColor(0x1f77b4), QColor(0x9467bd),
                                                  QColor(0xff7f0e), QColor(0xd62728), QColor(0x2ca02c),
                                                  QColor(0x7f7f7f)};
}  // namespace

QColor phaseColor(tokamak::Phase phase) { return kPhaseColor[static_cast<int>(phase)]; }

PhaseBars::PhaseBars(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("phaseBars"));
  setMinimumSize(200, 120);  // a cell of the live plots' grid, as small as a MetricPlot
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, new QCPTextElement(this, tr("Step profile"), QFont(font().family(), 9, QFont::Bold)));
  yAxis->setLabel(tr("ms per step"));
  xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  xAxis->grid()->setVisible(false);
  legend->setVisible(true);
  legend->setFont(QFont(font().family(), 8));
  // The legend beside the bars, not over them: inside, it hid the top of the tallest bar in a small pane.
  axisRect()->insetLayout()->take(legend);
  plotLayout()->addElement(1, 1, legend);
  plotLayout()->setColumnStretchFactor(1, 0.001);
  legend->setMargins(QMargins(4, 2, 4, 2));
  legend->setIconSize(QSize(14, 10));
  QCPBars* below = nullptr;
  for (int p = 0; p < tokamak::kPhaseCount; ++p) {
    auto* b = new QCPBars(xAxis, yAxis);
    b->setName(QString::fromUtf8(tokamak::phase_names()[p].label));
    b->setPen(QPen(kPhaseColor[p].darker(130)));
    b->setBrush(kPhaseColor[p]);
    b->setWidth(0.6);
    if (below) b->moveAbove(below);  // stacked: each phase starts where the one before it ends
    below = b;
    bars_[p] = b;
  }
}

void PhaseBars::setRuns(const std::vector<Run>& runs) {
  runs_ = static_cast<int>(runs.size());
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys;
  for (int r = 0; r < runs_; ++r) {
    keys << r + 1;
    ticker->addTick(r + 1, runs[size_t(r)].label);
  }
  xAxis->setTicker(ticker);
  double top = 0;
  for (int p = 0; p < tokamak::kPhaseCount; ++p) {
    QVector<double> values;
    bool any = false;
    for (const Run& run : runs) {
      const double ms = run.ms[size_t(p)];
      values << (std::isnan(ms) ? 0 : ms);
      any = any || !std::isnan(ms);
    }
    bars_[p]->setData(keys, values, true);
    // A phase no run reported (the all-reduce of one process) has no legend entry to explain.
    bars_[p]->setVisible(any);
    if (any) bars_[p]->addToLegend();
    else bars_[p]->removeFromLegend();
  }
  for (int r = 0; r < runs_; ++r)
    top = std::max(top, segmentBase(r, tokamak::Phase::kOther) + segment(r, tokamak::Phase::kOther));
  xAxis->setRange(0.4, runs_ + 0.6);
  yAxis->setRange(0, top > 0 ? top * 1.1 : 1);
  replot(QCustomPlot::rpQueuedReplot);
}

static double valueAt(const QCPBars* bars, int run) {
  const auto data = bars->data();
  return run >= 0 && run < data->size() ? data->at(run)->value : 0;
}

double PhaseBars::segment(int run, tokamak::Phase phase) const { return valueAt(bars(phase), run); }

double PhaseBars::segmentBase(int run, tokamak::Phase phase) const {
  double base = 0;
  for (const QCPBars* b = bars(phase)->barBelow(); b; b = b->barBelow()) base += valueAt(b, run);
  return base;
}

}  // namespace tokamak::ui
