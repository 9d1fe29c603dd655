// The step-profile bars and the waterfall's rungs, from the scoreboard (see scoreboard_charts.h).
#include "ui/history/scoreboard_charts.h"

#include <QObject>
#include <optional>

#include "engine/base/store/verdict.h"

namespace tokamak::ui {
namespace {

QString barLabel(const tokamak::Scoreboard& board, const tokamak::ScoreRow& row) {
  const QString label = QString::fromStdString(row.label);
  return board.rows.size() > 3 ? label.section(QLatin1Char(' '), 0, 0) : label;
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
  // The measure a verdict tests: tok/s, or the seconds to the target (what the scoreboard's verdicts test too).
  const auto measure = [byTimeToTarget](const tokamak::ScoreRow& row) {
    return byTimeToTarget ? row.time_to_target_s : row.tok_s;
  };
  std::vector<SpeedupWaterfall::Rung> rungs;
  std::vector<bool> drawn(board.groups.size(), false);
  std::vector<double> before;  // the previous rung's group members (empty: it was a single run)
  for (size_t r = 0; r < board.rows.size(); ++r) {
    const int k = groupOf[r];
    if (k < 0) {
      rungs.push_back({barLabel(board, board.rows[r]), rate(board.rows[r])});
      before.clear();
    } else if (!drawn[size_t(k)]) {
      drawn[size_t(k)] = true;
      // Named by the part after the ladder's "name/" prefix, without the group's "×N".
      const tokamak::ScoreGroup& g = board.groups[size_t(k)];
      const QString name = QString::fromStdString(g.label).section(QLatin1Char('/'), -1);
      std::vector<double> values;
      for (size_t m : g.members) values.push_back(measure(board.rows[m]));
      QString verdict;
      if (const auto v = before.empty() ? std::nullopt : tokamak::welch_verdict(before, values))
        verdict = v->resolved
                      ? (v->p < 0.001 ? QStringLiteral("p < 0.001") : QStringLiteral("p = %1").arg(v->p, 0, 'g', 2))
                      : QObject::tr("not resolved");
      rungs.push_back({name.section(QStringLiteral(" ×"), 0, 0), rate(g.mean), verdict});
      before = values;
    }
  }
  return rungs;
}

}  // namespace tokamak::ui
