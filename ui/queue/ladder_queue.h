// Run ladder…: a ladder file's rungs (engine/base/config/ladder.h) × seeds as runs for this computer's queue, named
// as `tokamak bench` names them, and "Compare this ladder": the runs page compares every run of a ladder,
// again as more of its rungs record (LadderCompare), with runs that differ only in the seed grouped.
#pragma once
#include <QList>
#include <QObject>
#include <QString>

#include "engine/base/config/config.h"

class QWidget;

namespace tokamak::ui {

class RunsPanel;

// Every rung once per seed: train.seed = SEED, name "LADDER/RUNG" (+ "-sSEED" with more than one seed). Empty,
// with the reason in *error, when the file or a seed is refused.
QList<Config> ladderRuns(const QString& path, const QList<qint64>& seeds, QString* error);
// "1,2,3" or "1 2 3" → seeds; false (reason in *error) for anything else or none.
bool parseSeeds(const QString& text, QList<qint64>* seeds, QString* error);
// The ladder a run belongs to by its name ("LADDER/RUNG…" → "LADDER"); "" for other runs.
QString ladderOf(const QString& runName);
// The dialogs of Run ladder…: a ladder file, then its seeds. False when the user cancels.
bool askLadderRun(QWidget* parent, QString* path, QList<qint64>* seeds);

// Keeps the runs page's compare view on a ladder's runs: compare() selects them and compares them; while the
// compare view still shows what it chose, runs of the ladder that appear in the store are added.
class LadderCompare : public QObject {
  Q_OBJECT
 public:
  explicit LadderCompare(RunsPanel* runs);
  bool compare(const QString& ladder);
  QString ladder() const { return ladder_; }

 private:
  QList<qint64> runsOf(const QString& ladder) const;
  void update();

  RunsPanel* runs_;
  QString ladder_;
  QList<qint64> shown_;
};

}  // namespace tokamak::ui
