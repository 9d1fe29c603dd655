// Time against cost per device (see plan_chart.h).
#include "ui/plan/plan_chart.h"

#include <QVBoxLayout>

#include "ui/plots/qcp.h"

namespace tokamak::ui {

PlanChart::PlanChart(QWidget* parent) : QWidget(parent), plot_(new QCustomPlot(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(plot_);
  plot_->setObjectName("planChart");
  plot_->xAxis->setLabel(tr("hours (log)"));
  plot_->yAxis->setLabel(tr("cost ($, log)"));
  plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  plot_->xAxis->setScaleType(QCPAxis::stLogarithmic);
  plot_->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  plot_->setMinimumHeight(160);
}

void PlanChart::setRows(const std::vector<PlanRow>& rows, const std::vector<QString>& labels) {
  plot_->clearGraphs();
  plot_->clearItems();
  points_ = 0;
  QCPGraph* g = plot_->addGraph();
  g->setLineStyle(QCPGraph::lsNone);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180), 7));
  named_.clear();
  double lo = 1e300, hi = 0, top = 0, bottom = 1e300;
  const auto shown = [](const PlanRow& r) { return r.fits && !r.this_machine && r.hours > 0; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const PlanRow& r = rows[i];
    if (!shown(r)) continue;
    g->addData(r.hours, r.cost);
    lo = std::min(lo, r.hours), hi = std::max(hi, r.hours), top = std::max(top, r.cost);
    if (r.cost > 0) bottom = std::min(bottom, r.cost);
    ++points_;
    // Named when no other device is both at least as fast and at least as cheap (and better in one).
    bool dominated = false;
    for (const PlanRow& o : rows)
      dominated = dominated || (shown(o) && o.hours <= r.hours && o.cost <= r.cost && (o.hours < r.hours || o.cost < r.cost));
    if (dominated) continue;
    auto* text = new QCPItemText(plot_);
    text->position->setCoords(r.hours, r.cost);
    // Alternately above and below its point: neighbours on the front do not write over each other.
    text->setPositionAlignment(Qt::AlignLeft | (named_.size() % 2 ? Qt::AlignTop : Qt::AlignBottom));
    named_ << (i < labels.size() ? labels[i] : QString::fromStdString(r.device));
    text->setText(named_.back());
    text->setFont(QFont(font().family(), 8));
  }
  if (points_ > 0) {
    plot_->xAxis->setRange(lo / 1.5, hi * 2.5);  // room on the right for the last label
    plot_->yAxis->setRange(bottom > 0 && bottom < 1e300 ? bottom / 1.6 : 0.01, top * 1.6);
  }
  plot_->replot();
}

}  // namespace tokamak::ui
