// SpeedupWaterfall: a ladder's scoreboard as a waterfall — the runs in the order compared (a ladder's rungs),
// each drawn as a floating bar from the previous rung's speedup to its own (both over the first run), and
// labelled with what that one switch bought (×tok/s over the previous rung): "what did each switch buy" as
// one picture. Gains are green, losses red; the first run is the ×1 bar everything starts from. Where a rung and the
// one before are groups of seeds, the label says under the ×N whether that step is resolved (Welch's t-test between
// the two groups: "p = 0.004", or "not resolved"), and a group's rung how many runs its value stands on ("3 of 5
// (1 failed, 1 censored)"); a group of one says it has no verdict.
#pragma once
#include <QString>
#include <vector>

#include "ui/plots/qcp.h"

namespace tokamak::ui {

class SpeedupWaterfall : public QCustomPlot {
  Q_OBJECT
 public:
  struct Rung {
    QString label;
    double tokS;  // a rate, higher is better (tok/s, or 1 / time to target); NaN or <= 0: not measured (the
                  // rung and the next are drawn without a step)
    QString verdict = {};  // lines under the ×N: the step from the rung before, when both are groups ("p = 0.004" |
                           // "not resolved" | "no verdict (needs ≥ 2 runs)"), then a group's "3 of 5 (2 censored)"
  };
  // What the rates are, for the axis: "tok/s" (the default) or "time to target" (rates are 1 / seconds).
  void setMeasure(const QString& measure);
  explicit SpeedupWaterfall(QWidget* parent = nullptr);

  void setRungs(const std::vector<Rung>& rungs);
  int rungCount() const { return int(step_.size()); }
  // Rung i's tok/s over rung i-1's (rung 0: 1); NaN where either is not measured.
  double stepSpeedup(int rung) const { return step_.at(size_t(rung)); }
  // Rung i's tok/s over rung 0's: the top (or bottom) of its bar.
  double cumulative(int rung) const { return cumulative_.at(size_t(rung)); }
  QString labelOf(int rung) const;  // "×1.35" drawn above the bar, and the step's verdict under it when there is one
  // The three stacked bar sets: invisible base, then gain and loss above it (one of the two is 0 per rung).
  QCPBars* baseBars() const { return base_; }
  QCPBars* gainBars() const { return gain_; }
  QCPBars* lossBars() const { return loss_; }

 private:
  QCPBars *base_, *gain_, *loss_;
  std::vector<double> step_, cumulative_;
  std::vector<QString> verdicts_;
  std::vector<QCPItemText*> labels_;
};

}  // namespace tokamak::ui
