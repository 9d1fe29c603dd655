// SpeedupWaterfall (see speedup_waterfall.h): floating bars as three stacked QCPBars — an invisible base up to
// the lower of the two speedups, then the gain (green) or the loss (red) — and a text item per rung.
#include "ui/plots/speedup_waterfall.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tokamak::ui {

// A rate's speedup reads "over the first run"; a time's is the first run's time over this one's.
void SpeedupWaterfall::setMeasure(const QString& measure) {
  yAxis->setLabel(measure == tr("tok/s") ? tr("tok/s over the first run (×)")
                                         : tr("first run's %1 over this one's (×)").arg(measure));
}

SpeedupWaterfall::SpeedupWaterfall(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("speedupWaterfall"));
  setMinimumSize(200, 120);  // as small as PhaseBars, its neighbour tab
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0,
                           new QCPTextElement(this, tr("Speedup per rung"), QFont(font().family(), 9, QFont::Bold)));
  setMeasure(tr("tok/s"));
  xAxis->grid()->setVisible(false);
  base_ = new QCPBars(xAxis, yAxis);
  base_->setPen(Qt::NoPen);
  base_->setBrush(Qt::NoBrush);
  gain_ = new QCPBars(xAxis, yAxis);
  gain_->setPen(QPen(QColor(0x2ca02c).darker(130)));
  gain_->setBrush(QColor(0x2ca02c));
  loss_ = new QCPBars(xAxis, yAxis);
  loss_->setPen(QPen(QColor(0xd62728).darker(130)));
  loss_->setBrush(QColor(0xd62728));
  for (QCPBars* b : {base_, gain_, loss_}) b->setWidth(0.6);
  gain_->moveAbove(base_);
  loss_->moveAbove(gain_);  // one of gain and loss is 0 at every rung
}

void SpeedupWaterfall::setRungs(const std::vector<Rung>& rungs) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const auto measured = [](double v) { return !std::isnan(v) && v > 0; };
  step_.clear(), cumulative_.clear(), verdicts_.clear();
  for (QCPItemText* t : labels_) removeItem(t);
  labels_.clear();
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys, base, gain, loss;
  double top = 1;
  for (size_t i = 0; i < rungs.size(); ++i) {
    const double first = rungs.front().tokS, prev = i ? rungs[i - 1].tokS : first, mine = rungs[i].tokS;
    const double cum = measured(first) && measured(mine) ? mine / first : kNaN;
    const double before = i == 0 ? 0 : (measured(first) && measured(prev) ? prev / first : kNaN);
    step_.push_back(i == 0 ? (measured(mine) ? 1 : kNaN) : (measured(prev) && measured(mine) ? mine / prev : kNaN));
    cumulative_.push_back(cum);
    verdicts_.push_back(rungs[i].verdict);
    const bool drawn = !std::isnan(cum) && !std::isnan(before);
    keys << double(i + 1);
    base << (drawn ? std::min(before, cum) : 0);
    gain << (drawn && cum >= before ? cum - before : 0);
    loss << (drawn && cum < before ? before - cum : 0);
    ticker->addTick(double(i + 1), rungs[i].label);
    if (drawn) {
      top = std::max(top, std::max(before, cum));
      auto* text = new QCPItemText(this);
      text->position->setCoords(double(i + 1), std::max(before, cum));
      text->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
      text->setText(labelOf(int(i)));
      labels_.push_back(text);
    }
  }
  base_->setData(keys, base, true);
  gain_->setData(keys, gain, true);
  loss_->setData(keys, loss, true);
  xAxis->setTicker(ticker);
  // Long names (a ladder's rungs) side by side overlap past a few bars: slanted, they fit under their bars.
  int longest = 0;
  for (const Rung& r : rungs) longest = std::max(longest, int(r.label.size()));
  xAxis->setTickLabelRotation(rungs.size() > 3 && longest > 4 ? -35 : 0);
  xAxis->setRange(0.4, double(rungs.size()) + 0.6);
  yAxis->setRange(0, top * 1.2);
  replot(QCustomPlot::rpQueuedReplot);
}

QString SpeedupWaterfall::labelOf(int rung) const {
  const double s = stepSpeedup(rung);
  if (std::isnan(s)) return QStringLiteral("-");
  const QString& verdict = verdicts_.at(size_t(rung));
  return QStringLiteral("×%1").arg(s, 0, 'f', 2) + (verdict.isEmpty() ? QString() : QLatin1Char('\n') + verdict);
}

}  // namespace tokamak::ui
