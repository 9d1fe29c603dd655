// One sweep as the sweep view shows it, read from the run store (engine/fleet/queue/sweep_store.h): each trial's
// swept values, how far it got (its highest rung with a result) and its metric there, ranked; the best trial
// of each value of a choice key (optimizer.name: "best lr for each optimizer"); and which key matters most
// (engine/fleet/queue/sweep_importance.h). Plain data, so the plots, the table and the exports share one reading.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>
#include <vector>

#include "engine/fleet/queue/sweep_importance.h"

namespace tokamak {
class RunStore;
}

namespace tokamak::ui {

struct SweptKey {
  QString key;             // "optimizer.lr"
  bool choice = false;     // a value that is not a number (optimizer.name): categories, no order
  bool log = false;        // swept on a log range: its plots use a log axis
  QStringList categories;  // a choice key's values, in the sweep file's order
};

struct SweepTrialRow {
  qint64 queueId = 0, point = 0;
  QString name, state, runUid, folder, error;
  QString configJson;      // the whole config the trial trained with
  QList<QVariant> values;  // per swept key: a double, or a QString for a choice
  qint64 rung = -1;        // the highest rung with a result (-1: none yet)
  qint64 step = 0;         // the step of that rung
  double metric = 0;       // the metric there (NaN: none yet, failed or diverged)
  bool finished = false;   // trained to train.steps
  int rank = 0;            // 1 = best
  QString bestOf;          // "optimizer.name=muon" when it is the best trial of that value of the colour key
};

struct SweepResults {
  qint64 id = 0;
  QString name, metric;
  bool maximize = false;
  qint64 minSteps = 0, eta = 3;
  QList<SweptKey> keys;
  int colorKey = -1;            // the choice key whose values colour the plots (-1: none)
  QList<SweepTrialRow> trials;  // ranked: best first
  std::vector<KeyImportance> importance;
  QList<QPair<QString, double>> choiceMeans;  // the colour key's values: mean metric at the first rung
  qint64 firstRungStep = 0;
  int queued = 0, running = 0, ended = 0;
  // Whether A ranks above B: further trained first (a higher rung), then the better metric there; a
  // trial with no finite metric last.
  static bool ranksAbove(const SweepTrialRow& a, const SweepTrialRow& b, bool maximize);
};

// Reads sweep ID from the store. Throws the store's one-line error when there is no such sweep.
SweepResults readSweep(tokamak::RunStore& store, qint64 id);
// A sweep's label for a picker: "3 · nano-lr-opt (8 trials)".
QString sweepLabel(const SweepResults& s);

}  // namespace tokamak::ui
