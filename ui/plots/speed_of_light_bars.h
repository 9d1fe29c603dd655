// SpeedOfLightBars: each kind of a step's work held against its floor (engine/base/perf/speed_of_light.h), for the
// runs `--kernels` profiled (bench or train): per kind one bar per run of its ms per step, a dark tick across the
// bar at its floor (the least time the machine's limits allow its work), and a tooltip with the fraction of the
// limit it reached and the switches that act on it. Two rungs of a ladder side by side show which kind a switch moved
// toward its floor.
#pragma once
#include <QString>
#include <vector>

#include "engine/base/store/run_store.h"
#include "ui/plots/qcp.h"

namespace tokamak::ui {

class SpeedOfLightBars : public QCustomPlot {
  Q_OBJECT
 public:
  struct Run {
    QString label;
    QColor color;
    tokamak::SpeedOfLightRecord record;  // empty kinds: the run was not profiled (no bars)
  };
  explicit SpeedOfLightBars(QWidget* parent = nullptr);

  void setRuns(const std::vector<Run>& runs);
  // The kinds on the axis (every kind a run measured, in op_kinds()' order), and the runs that have bars.
  const QStringList& kinds() const { return kinds_; }
  int profiledRuns() const { return static_cast<int>(bars_.size()); }
  // Run `run`'s (among the profiled) bar and floor at kind `kind`: ms per step, and the floor (-1: not counted;
  // NaN: the run did not measure that kind).
  double time(int run, int kind) const;
  double floor(int run, int kind) const;
  // What the tooltip says over that bar.
  QString toolTip(int run, int kind) const;

 protected:
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  QStringList kinds_;
  std::vector<Run> runs_;  // the profiled ones, in the order given
  std::vector<QCPBars*> bars_;
  std::vector<QCPGraph*> floors_;
  double width_ = 0.8;
  QCPTextElement* note_ = nullptr;  // what is shown when no run was profiled
};

}  // namespace tokamak::ui
