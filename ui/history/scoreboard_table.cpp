// The scoreboard table: runs, then groups (see scoreboard_table.h).
#include "ui/history/scoreboard_table.h"
#include "ui/common/qt_helpers.h"

#include <QObject>
#include <QTableWidget>

#include "ui/history/run_colors.h"
#include "ui/history/table_cells.h"

namespace tokamak::ui {
namespace {

// The columns after the name and setup, shared by a run's row and a group's (`spread` adds a group's ± parts).
void fillNumbers(QTableWidget* t, int r, const tokamak::ScoreRow& row, bool target, const tokamak::ScoreGroup* spread) {
  QString rate = qs(tokamak::format_count(row.tok_s));
  if (spread) rate += QStringLiteral(" ± ") + qs(tokamak::format_count(spread->tok_s_std));
  t->setItem(r, 1, tableCell(qs(row.setup)));
  t->setItem(r, 2, tableCell(rate, true));
  t->setItem(r, 3, tableCell(formatOrDash("%.2f×", row.speedup), true));
  t->setItem(r, 4, tableCell(formatOrDash("%.1f%%", row.mfu * 100), true));
  t->setItem(r, 5, tableCell(qs(tokamak::format_bytes(row.peak_mem)), true));
  t->setItem(r, 6, tableCell(formatOrDash("%.4f", row.final_val_loss), true));
  t->setItem(r, 7, tableCell(formatOrDash("%.4f", row.best_val_loss), true));
  if (!target) return;
  QString time = qs(tokamak::format_time_to_target(row.time_to_target_s, row.target));
  if (spread)
    time += QStringLiteral(" ± ") + formatOrDash("%.1f s", spread->time_to_target_std) +
            QObject::tr(" (%1/%2 reached)").arg(spread->reached).arg(spread->members.size());
  t->setItem(r, 8, tableCell(time, true));
  t->setItem(r, 9, tableCell(formatOrDash("%.0f", row.steps_to_target), true));
  t->setItem(r, 10, tableCell(formatOrDash("%.2f×", row.target_speedup), true));
}

}  // namespace

void showScoreboard(QTableWidget* table, const tokamak::Scoreboard& board) {
  QStringList headers = {
      QObject::tr("Run"), QObject::tr("Setup"),       QObject::tr("tok/s"),          QObject::tr("Speedup"),
      QObject::tr("MFU"), QObject::tr("Peak memory"), QObject::tr("Final val loss"), QObject::tr("Best val loss")};
  const bool target = tokamak::has_target(board);
  if (target) headers << QObject::tr("Time to target") << QObject::tr("Steps to target") << QObject::tr("Time speedup");
  table->clear();
  table->setColumnCount(int(headers.size()));
  table->setHorizontalHeaderLabels(headers);
  const int runs = int(board.rows.size());
  table->setRowCount(runs + int(board.groups.size()) + int(board.single_groups.size()));
  for (int r = 0; r < runs; ++r) {
    const tokamak::ScoreRow& row = board.rows[size_t(r)];
    auto* label = tableCell(qs(row.label) + (size_t(r) == board.baseline ? QObject::tr(" (baseline)") : QString()));
    label->setForeground(runColor(r));
    table->setItem(r, 0, label);
    fillNumbers(table, r, row, target, nullptr);
  }
  // A row per group: the means of its runs, tok/s with its spread; in italics, in its curve's colour.
  for (int k = 0; k < int(board.groups.size()); ++k) {
    const tokamak::ScoreGroup& g = board.groups[size_t(k)];
    const int r = runs + k;
    // "B ×5 (mean, 2 of 5 complete)" on every group: how many runs the means stand on is read, not inferred from a
    // missing note. Without a baseline's group to test against, why there is no verdict.
    QString text = QObject::tr("%1 (mean, %2 of %3 complete)").arg(qs(g.label)).arg(g.complete).arg(g.members.size());
    if (!g.no_verdict.empty()) text += QObject::tr(": no verdict, %1").arg(qs(g.no_verdict));
    auto* label = tableCell(text);
    if (!g.no_verdict.empty())
      label->setToolTip(QObject::tr("No verdict against the baseline: %1. Make the baseline a run of a group with 2 "
                                    "runs or more.")
                            .arg(qs(g.no_verdict)));
    label->setForeground(runColor(int(g.members.front())));
    QFont italic = label->font();
    italic.setItalic(true);
    label->setFont(italic);
    table->setItem(r, 0, label);
    fillNumbers(table, r, g.mean, target, &g);
    for (int c = 1; c < headers.size(); ++c) table->item(r, c)->setFont(italic);
    // Against the baseline's group (Welch's t-test): "resolved" or not beside the value, the numbers in its tooltip.
    const auto verdict = [&](int column, const std::optional<tokamak::Verdict>& v) {
      if (!v || column >= headers.size()) return;
      QTableWidgetItem* item = table->item(r, column);
      item->setText(item->text() + (v->resolved ? QObject::tr(" · resolved") : QObject::tr(" · not resolved")));
      item->setToolTip(QObject::tr("Against the baseline's group (Welch's t-test, other minus baseline): %1")
                           .arg(qs(tokamak::verdict_text(*v))));
    };
    verdict(2, g.tok_s_verdict);
    verdict(6, g.val_loss_verdict);
    verdict(8, g.target_verdict);
  }
  // A group of one run: named, with why it has no row of means and no verdict.
  for (int k = 0; k < int(board.single_groups.size()); ++k) {
    const tokamak::Scoreboard::SingleGroup& g = board.single_groups[size_t(k)];
    const int r = runs + int(board.groups.size()) + k;
    auto* label = tableCell(QObject::tr("%1: no verdict").arg(qs(g.label)));
    label->setForeground(runColor(int(g.member)));
    label->setToolTip(QObject::tr("A group needs 2 runs or more for its means and a verdict against the baseline's"));
    table->setItem(r, 0, label);
    table->setItem(r, 1, tableCell(QObject::tr("a group needs 2 runs or more")));
  }
  table->resizeColumnsToContents();
}

}  // namespace tokamak::ui
