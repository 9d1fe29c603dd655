// SummaryTable: every metric the compared runs recorded, a row each, a column per run, summarised the way
// the user picks — last value, min, max, best (min of a loss or a time, max of tok/s or MFU) or the mean of
// the last K values — as `tokamak runs compare --stat` does (the arithmetic is the engine's,
// scoreboard.h). The choice is remembered across sessions (QSettings "compare/summaryStat").
#pragma once
#include <QStringList>
#include <QWidget>
#include <vector>

#include "engine/base/store/run_store.h"

class QComboBox;
class QSpinBox;
class QTableWidget;

namespace tokamak::ui {

class SummaryTable : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryTable(QWidget* parent = nullptr);

  // One entry per run (labels and metric rows in the same order).
  void setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::MetricRow>>& metrics);
  // "last", "min", "max", "best" or "mean:K"; false (nothing changed) for anything else.
  bool setStat(const QString& stat);
  QString stat() const;
  QTableWidget* table() const { return table_; }

 private:
  void rebuild();

  QStringList labels_;
  std::vector<std::vector<tokamak::MetricRow>> metrics_;
  QComboBox* stat_;
  QSpinBox* window_;  // K of "mean:K"
  QTableWidget* table_;
};

}  // namespace tokamak::ui
