// What the Sweep… dialog edits, as data: the keys to sweep (a list of values or a range), the search method,
// seeds, metric and early stopping. It turns into a sweep file (docs/SWEEPS.md) over a base config and back,
// so the dialog and "Open sweep file…" share one path into engine/fleet/queue/sweep.h's plan_sweep.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <string>

namespace tokamak::ui {

struct SweepAxis {
  QString key;         // "optimizer.lr"
  bool range = false;  // a range (min, max, count, scale) or a list of values
  QStringList values;  // the list, as typed: numbers, true/false, or text
  double min = 0, max = 0;
  int count = 4;
  bool log = true;
};

struct SweepForm {
  QString name = QStringLiteral("sweep");
  QList<SweepAxis> axes;
  bool random = false;  // method: random (count points drawn with seed) or grid
  int count = 8;
  qint64 seed = 0;
  QList<qint64> seeds;                               // train.seed values, every point once per seed; empty = none
  QString metric = QStringLiteral("best_val_loss");  // final_val_loss | best_val_loss | time_to_target
  bool maximize = false;
  bool asha = false;
  qint64 minSteps = 10, eta = 3;
};

// The sweep file: FORM over BASE_JSON (a whole config as config_to_json writes it), pretty-printed.
std::string sweepFileText(const SweepForm& form, const std::string& baseJson);
// A sweep file read back into a form and its base (the file's "base", "" when it has none). Returns "" or
// the one-line reason the file cannot be shown in the form (not JSON, a key neither a list nor a range).
QString sweepFormFromFile(const std::string& text, SweepForm* form, std::string* baseJson);
// "1e-3, 3e-3" → the JSON values of a list axis (numbers where they read as numbers, true/false, else text).
QStringList splitValues(const QString& text);

}  // namespace tokamak::ui
