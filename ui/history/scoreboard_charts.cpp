// The step-profile bars and the waterfall's rungs, from the scoreboard (see scoreboard_charts.h).
#include "ui/history/scoreboard_charts.h"

#include <QObject>
#include <QStringList>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/base/store/verdict.h"

namespace tokamak::ui {
namespace {

QString barLabel(const tokamak::Scoreboard& board, const tokamak::ScoreRow& row) {
  const QString label = QString::fromStdString(row.label);
  return board.rows.size() > 3 ? label.section(QLatin1Char(' '), 0, 0) : label;
}

// The measure a verdict tests, per member: tok/s, or the seconds to the target (what the scoreboard's verdicts test
// too). A run with a target that never reached it is censored (+inf, as run_groups.cpp counts it), not missing.
std::vector<double> groupMeasure(const tokamak::Scoreboard& board, const tokamak::ScoreGroup& g, bool byTimeToTarget) {
  std::vector<double> values;
  for (size_t m : g.members) {
    const tokamak::ScoreRow& row = board.rows[m];
    if (!byTimeToTarget) values.push_back(row.tok_s);
    else if (std::isnan(row.time_to_target_s) && row.target > 0) values.push_back(std::numeric_limits<double>::infinity());
    else values.push_back(row.time_to_target_s);
  }
  return values;
}

// "3 of 5 (1 failed, 1 censored)": how many members the rung's value stands on, and what became of the others.
QString usedOf(const std::vector<double>& values) {
  int used = 0, censored = 0, missing = 0;
  for (double v : values) {
    if (std::isfinite(v)) ++used;
    else if (std::isnan(v)) ++missing;
    else ++censored;
  }
  QStringList lost;
  if (missing > 0) lost << QObject::tr("%1 failed").arg(missing);
  if (censored > 0) lost << QObject::tr("%1 censored").arg(censored);
  const QString text = QObject::tr("%1 of %2").arg(used).arg(values.size());
  return lost.isEmpty() ? text : text + QStringLiteral(" (") + lost.join(QStringLiteral(", ")) + QLatin1Char(')');
}

}  // namespace

std::vector<PhaseBars::Run> profileBars(const tokamak::Scoreboard& board) {
  std::vector<PhaseBars::Run> bars;
  for (const tokamak::ScoreRow& row : board.rows) bars.push_back({barLabel(board, row), row.phase_ms});
  return bars;
}

std::vector<SpeedupWaterfall::Rung> waterfallRungs(const tokamak::Scoreboard& board, bool byTimeToTarget) {
  const auto rate = [byTimeToTarget](const tokamak::ScoreRow& row) {
    return byTimeToTarget ? 1.0 / row.time_to_target_s : row.tok_s;
  };
  std::vector<int> groupOf(board.rows.size(), -1);
  for (size_t k = 0; k < board.groups.size(); ++k)
    for (size_t member : board.groups[k].members) groupOf[member] = int(k);
  std::vector<bool> alone(board.rows.size(), false);  // a group of one run (only while grouping)
  for (const tokamak::Scoreboard::SingleGroup& s : board.single_groups) alone[s.member] = true;
  std::vector<SpeedupWaterfall::Rung> rungs;
  std::vector<bool> drawn(board.groups.size(), false);
  std::vector<double> before;  // the previous rung's group members (empty: it was a single run)
  for (size_t r = 0; r < board.rows.size(); ++r) {
    const int k = groupOf[r];
    if (k < 0) {
      // A group of one has no verdict: said, with why, rather than left blank like an ungrouped run's.
      rungs.push_back({barLabel(board, board.rows[r]), rate(board.rows[r]),
                       alone[r] ? QObject::tr("no verdict (needs ≥ 2 runs)") : QString()});
      before.clear();
    } else if (!drawn[size_t(k)]) {
      drawn[size_t(k)] = true;
      // Named by the part after the ladder's "name/" prefix, with the group's "×N".
      const tokamak::ScoreGroup& g = board.groups[size_t(k)];
      const std::vector<double> values = groupMeasure(board, g, byTimeToTarget);
      QString verdict;
      if (r > 0 && before.empty()) verdict = QObject::tr("no verdict (rung before: 1 run)");
      else if (const auto v = before.empty() ? std::nullopt : tokamak::welch_verdict(before, values))
        verdict = v->resolved
                      ? (v->p < 0.001 ? QStringLiteral("p < 0.001") : QStringLiteral("p = %1").arg(v->p, 0, 'g', 2))
                      : QObject::tr("not resolved");
      const QString used = usedOf(values);
      rungs.push_back({QString::fromStdString(g.label).section(QLatin1Char('/'), -1), rate(g.mean),
                       verdict.isEmpty() ? used : verdict + QLatin1Char('\n') + used});
      before = values;
    }
  }
  return rungs;
}

}  // namespace tokamak::ui
