// SpeedOfLightBars (see speed_of_light_bars.h): one QCPBars per profiled run, its bars side by side at each kind,
// and one QCPGraph per run whose scatter points, a short dark line each, mark the floors.
#include "ui/plots/speed_of_light_bars.h"

#include <QMouseEvent>
#include <QToolTip>
#include <cmath>
#include <limits>

#include "engine/base/util/format.h"
#include "engine/base/perf/op_kinds.h"
#include "engine/base/perf/speed_of_light.h"

namespace tokamak::ui {
namespace {
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const tokamak::KindFloorRow* find_kind(const tokamak::SpeedOfLightRecord& r, const QString& kind) {
  for (const tokamak::KindFloorRow& k : r.kinds)
    if (QString::fromStdString(k.kind) == kind) return &k;
  return nullptr;
}
}  // namespace

SpeedOfLightBars::SpeedOfLightBars(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("speedOfLightBars"));
  setMinimumSize(200, 120);
  setMouseTracking(true);  // the tooltips follow the pointer without a button held
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0,
                           new QCPTextElement(this, tr("Speed of light: each kind's time, its floor marked"),
                                              QFont(font().family(), 9, QFont::Bold)));
  yAxis->setLabel(tr("ms per step"));
  xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
  xAxis->setTickLabelRotation(30);
  xAxis->grid()->setVisible(false);
  legend->setVisible(true);
  legend->setFont(QFont(font().family(), 8));
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  note_ = new QCPTextElement(this,
                             tr("No run here was profiled: `tokamak bench --kernels N` or `tokamak train --kernels N` "
                                "records each kind of work against its floor"),
                             QFont(font().family(), 8));
}

void SpeedOfLightBars::setRuns(const std::vector<Run>& runs) {
  clearPlottables();
  bars_.clear(), floors_.clear(), runs_.clear(), kinds_.clear();
  for (const Run& r : runs)
    if (!r.record.kinds.empty()) runs_.push_back(r);
  for (const std::string& kind : tokamak::op_kinds())
    for (const Run& r : runs_)
      if (find_kind(r.record, QString::fromStdString(kind))) {
        kinds_ << QString::fromStdString(kind);
        break;
      }
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int k = 0; k < kinds_.size(); ++k) ticker->addTick(k + 1, kinds_[k]);
  xAxis->setTicker(ticker);
  // The floor's mark: a line as wide as a thin bar, drawn at size 6 (a custom path's own scale).
  QPainterPath tick;
  tick.moveTo(-9, 0), tick.lineTo(9, 0);
  const int n = static_cast<int>(runs_.size());
  const double w = n > 0 ? width_ / n : width_;
  double top = 0;
  for (int r = 0; r < n; ++r) {
    const Run& run = runs_[size_t(r)];
    auto* bars = new QCPBars(xAxis, yAxis);
    bars->setName(run.label);
    bars->setPen(QPen(run.color.darker(130)));
    bars->setBrush(run.color);
    bars->setWidth(w);
    auto* floors = new QCPGraph(xAxis, yAxis);
    floors->setLineStyle(QCPGraph::lsNone);
    floors->setScatterStyle(QCPScatterStyle(tick, QPen(Qt::black, 2), Qt::NoBrush, 6));
    floors->removeFromLegend();
    QVector<double> keys, values, floorKeys, floorValues;
    for (int k = 0; k < kinds_.size(); ++k) {
      const tokamak::KindFloorRow* row = find_kind(run.record, kinds_[k]);
      if (!row) continue;
      const double key = k + 1 + (r - (n - 1) / 2.0) * w;
      keys << key, values << row->ms;
      top = std::max(top, row->ms);
      if (row->floor_ms >= 0) floorKeys << key, floorValues << row->floor_ms;
    }
    bars->setData(keys, values, true);
    floors->setData(floorKeys, floorValues, true);
    bars_.push_back(bars), floors_.push_back(floors);
  }
  xAxis->setRange(0.4, kinds_.size() + 0.6);
  yAxis->setRange(0, top > 0 ? top * 1.12 : 1);
  // Without a profiled run the plot says how to get one, in place of empty axes. An element taken out of the layout
  // is still drawn where it last was: it is hidden too.
  const bool empty = n == 0;
  if (empty && !plotLayout()->hasElement(2, 0)) {
    plotLayout()->insertRow(2);
    plotLayout()->addElement(2, 0, note_);
  } else if (!empty && plotLayout()->hasElement(2, 0)) {
    plotLayout()->take(note_);
    plotLayout()->simplify();
  }
  note_->setVisible(empty);
  legend->setVisible(n > 0);
  replot();
}

double SpeedOfLightBars::time(int run, int kind) const {
  if (run < 0 || run >= profiledRuns() || kind < 0 || kind >= kinds_.size()) return kNaN;
  const tokamak::KindFloorRow* row = find_kind(runs_[size_t(run)].record, kinds_[kind]);
  return row ? row->ms : kNaN;
}

double SpeedOfLightBars::floor(int run, int kind) const {
  if (run < 0 || run >= profiledRuns() || kind < 0 || kind >= kinds_.size()) return kNaN;
  const tokamak::KindFloorRow* row = find_kind(runs_[size_t(run)].record, kinds_[kind]);
  return row ? row->floor_ms : kNaN;
}

QString SpeedOfLightBars::toolTip(int run, int kind) const {
  if (run < 0 || run >= profiledRuns() || kind < 0 || kind >= kinds_.size()) return {};
  const Run& r = runs_[size_t(run)];
  const tokamak::KindFloorRow* row = find_kind(r.record, kinds_[kind]);
  if (!row) return {};
  QString text = tr("%1, %2: %3 ms per step").arg(kinds_[kind], r.label).arg(row->ms, 0, 'f', 2);
  if (row->floor_ms >= 0) {
    const bool compute = row->bound == "compute";
    const double rate = compute ? r.record.matmul_flops : r.record.memory_bytes_per_s;
    text += tr("\nfloor %1 ms: %2 at %3 (%4)")
                .arg(row->floor_ms, 0, 'f', 2)
                .arg(compute ? QString::fromStdString(tokamak::format_count(row->flops)) + " FLOP"
                             : QString::fromStdString(tokamak::format_bytes(row->bytes)))
                .arg(compute ? QString::fromStdString(tokamak::format_count(rate)) + " FLOP/s"
                             : QString::fromStdString(tokamak::format_bytes(rate)) + "/s")
                .arg(compute ? tr("the matmul rate") : tr("the memory bandwidth"));
    if (row->ms > 0) text += tr("\n%1% of the limit reached").arg(100 * row->floor_ms / row->ms, 0, 'f', 1);
  } else {
    text += tr("\nno floor: its work is not counted");
  }
  const std::string switches = tokamak::kind_switches(kinds_[kind].toStdString());
  if (!switches.empty()) text += tr("\nswitches that act on it: %1").arg(QString::fromStdString(switches));
  return text;
}

void SpeedOfLightBars::mouseMoveEvent(QMouseEvent* event) {
  QCustomPlot::mouseMoveEvent(event);
  const double key = xAxis->pixelToCoord(event->position().x());
  const int n = profiledRuns();
  const int kind = static_cast<int>(std::lround(key)) - 1;
  if (n == 0 || kind < 0 || kind >= kinds_.size()) {
    QToolTip::hideText();
    return;
  }
  const double w = width_ / n;
  const double first = kind + 1 - width_ / 2;
  const int run = static_cast<int>(std::floor((key - first) / w));
  const QString text = run >= 0 && run < n ? toolTip(run, kind) : QString();
  if (text.isEmpty()) QToolTip::hideText();
  else QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

}  // namespace tokamak::ui
