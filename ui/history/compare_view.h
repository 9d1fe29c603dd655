// CompareView: selected runs side by side, and the controls over them (metric, X axis, baseline, grouping,
// band). It holds the runs read from the store and hands each part what it shows: the overlaid curves
// (compare_curves.h), the scoreboard (scoreboard_table.h), the step profiles and the ladder's waterfall beside
// it (scoreboard_charts.h), and in tabs beside the plot the config differences (config_diff.h), every metric
// summarised (summary_table.h) and the runs' samples at a chosen step (sample_compare.h). "Group" draws runs
// that belong together — same config but the seed, a name pattern, the same first tag
// (engine/base/store/run_groups.h) — as one mean curve with a band, and adds a row per group under the scoreboard.
// The arithmetic is the engine's (scoreboard.h, run_groups.h), so the numbers match `tokamak runs compare`.
// The member functions for the controls are in compare_view_controls.cpp.
#pragma once

#include <QList>
#include <QVector>
#include <QStringList>
#include <QWidget>
#include <string>
#include <vector>

#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "ui/history/compare_curves.h"

class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSplitter;
class QTabWidget;
class QTableWidget;

namespace tokamak::ui {

class LayerCompare;
class SummaryTable;
class PhaseBars;
class SpeedOfLightBars;
class SampleCompare;
class SpeedupWaterfall;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  enum class PlotMetric { TrainLoss, ValLoss, TokS, Mfu, Memory };
  enum class XAxis { Step, Tokens, WallTime };
  enum class BandKind { MinMax, Std };

  explicit CompareView(QWidget* parent = nullptr);

  // Reads the runs' metrics and config from the store; throws the store's Error (the panel shows it).
  void setRuns(tokamak::RunStore& store, const QList<qint64>& ids);
  // Reads the same runs again (a compared run is still writing).
  void reload(tokamak::RunStore& store);
  void clear();
  QList<qint64> runIds() const { return ids_; }

  void setMetric(PlotMetric metric);
  // Any recorded metric by its stored name ("step_ms", "skipped_steps", ...); false when no run has it.
  bool setMetricKey(const QString& key);
  QString metricKey() const;
  QStringList metricKeys() const;  // what the picker offers, in its order
  void setXAxis(XAxis axis);
  // Any recorded metric as the X axis (e.g. loss against tok_s: a Pareto view of a ladder), drawn as points;
  // false when no run has it. setXAxis() returns to step, tokens or wall time.
  bool setXAxisKey(const QString& key);
  QString xAxisKey() const { return QString::fromStdString(xKey_); }  // "" for step, tokens, wall time
  void setBaseline(int runIndex);                                     // index into runIds()
  // How runs are grouped, as `runs compare --group`: "none", "seed", "tag" or "name:REGEX". False (and the
  // reason in groupError()) for a spec the engine refuses; the grouping is then left as it was.
  bool setGrouping(const QString& spec);
  QString grouping() const;
  QString groupError() const { return groupError_; }
  void setBand(BandKind band);
  BandKind band() const { return band_; }

  QCustomPlot* plot() const { return plot_; }
  QTableWidget* scoreTable() const { return scoreTable_; }
  QTableWidget* diffTable() const { return diffTable_; }
  PhaseBars* phaseBars() const { return phaseBars_; }
  SpeedOfLightBars* speedOfLight() const { return speedOfLight_; }
  SpeedupWaterfall* waterfall() const { return waterfall_; }
  QComboBox* waterfallBy() const { return waterfallBy_; }
  QComboBox* groupBox() const { return groupBox_; }
  SampleCompare* sampleCompare() const { return samples_; }
  SummaryTable* summaryTable() const { return summary_; }
  LayerCompare* layerCompare() const { return layers_; }
  const tokamak::Scoreboard& scoreboard() const { return board_; }
  QColor colorOf(int runIndex) const;

 private:
  void buildControls();
  QHBoxLayout* layOutControls();
  QSplitter* buildPlotAndTabs();
  QTabWidget* buildCharts();
  void rebuildMetricChoices();
  void rebuildPlot();
  void rebuildScoreboard();
  void rebuildDiff();
  void applyGroupControls();      // the group box and pattern edit -> setGrouping
  QStringList runLabels() const;  // the compared runs' labels, in order

  QList<qint64> ids_;
  std::vector<std::vector<tokamak::MetricRow>> metrics_;  // [run][row]
  std::vector<tokamak::ScoreInput> inputs_;
  std::vector<tokamak::GroupInput> members_;  // names, tags and configs, for grouping
  tokamak::GroupSpec group_;
  tokamak::Grouping grouping_;  // of the runs shown, by group_
  QString groupError_;
  BandKind band_ = BandKind::MinMax;
  tokamak::Scoreboard board_;
  std::vector<CurveChoice> axes_;  // the picker's choices: the five defaults (PlotMetric order), then the rest
  int metric_ = 0;                 // index into axes_
  XAxis xAxis_ = XAxis::Step;
  std::string xKey_;  // a metric as the X axis; "" = xAxis_
  int baseline_ = 0;

  QComboBox* metricBox_ = nullptr;
  QComboBox* xBox_ = nullptr;
  QComboBox* baselineBox_ = nullptr;
  QComboBox* groupBox_ = nullptr;
  QLineEdit* patternEdit_ = nullptr;  // the name pattern when grouping by name
  QComboBox* bandBox_ = nullptr;
  QLabel* title_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  QTableWidget* scoreTable_ = nullptr;
  QTableWidget* diffTable_ = nullptr;
  PhaseBars* phaseBars_ = nullptr;
  SpeedOfLightBars* speedOfLight_ = nullptr;
  std::vector<tokamak::SpeedOfLightRecord> speedOfLightRecords_;  // [run]: its limits, and what --kernels stored
  SpeedupWaterfall* waterfall_ = nullptr;
  QComboBox* waterfallBy_ = nullptr;  // the waterfall's measure: tok/s or time to target
  SampleCompare* samples_ = nullptr;
  SummaryTable* summary_ = nullptr;
  LayerCompare* layers_ = nullptr;
};

}  // namespace tokamak::ui
