// PhaseBars: where a step's time goes, as one stacked bar per run — ms per step by phase (data, forward,
// backward, all-reduce, optimizer, other: engine/base/run/phases.h), one QCPBars per phase stacked with
// moveAbove. Two rungs of a ladder side by side show which phase a switch shrank. The live view draws the
// running run's bar, the compare view one per compared run (the scoreboard's means, scoreboard.h).
#pragma once
#include <QString>
#include <array>
#include <vector>

#include "engine/base/run/phases.h"
#include "ui/plots/qcp.h"

namespace tokamak::ui {

// A phase's colour, the same in the bars and in the live plot of the phases over time.
QColor phaseColor(tokamak::Phase phase);

class PhaseBars : public QCustomPlot {
  Q_OBJECT
 public:
  struct Run {
    QString label;
    std::array<double, tokamak::kPhaseCount> ms;  // NaN: the run did not report that phase
  };
  explicit PhaseBars(QWidget* parent = nullptr);

  void setRuns(const std::vector<Run>& runs);
  int runCount() const { return runs_; }
  // The drawn height of one run's segment of a phase (0 where it was not reported).
  double segment(int run, tokamak::Phase phase) const;
  // Where the segment starts: the segments of the bars below it in the stack (barBelow()), added up.
  double segmentBase(int run, tokamak::Phase phase) const;
  QCPBars* bars(tokamak::Phase phase) const { return bars_[static_cast<size_t>(phase)]; }

 private:
  std::array<QCPBars*, tokamak::kPhaseCount> bars_{};
  int runs_ = 0;
};

}  // namespace tokamak::ui
