// SampleCompare: the compared runs' samples side by side at one step — a column per run holding the sample
// nearest the chosen step (each run samples on its own schedule), with its step and prompt, so what the runs
// write from the same prompt at the same point of training can be read across.
#pragma once
#include <QWidget>
#include <vector>

#include "engine/store/run_store.h"

class QSpinBox;
class QTableWidget;

namespace tokamak::ui {

class SampleCompare : public QWidget {
  Q_OBJECT
 public:
  explicit SampleCompare(QWidget* parent = nullptr);

  // One entry per run (labels and samples in the same order); keeps the chosen step, or takes the last
  // sampled step when none was chosen.
  void setRuns(const QStringList& labels, const std::vector<std::vector<tokamak::SampleRow>>& samples);
  void setStep(qint64 step);
  QTableWidget* table() const { return table_; }

 private:
  void rebuild();

  QStringList labels_;
  std::vector<std::vector<tokamak::SampleRow>> samples_;
  QSpinBox* step_;
  QTableWidget* table_;
};

// The sample nearest `step` (the earlier one on a tie); nullptr when there is none.
const tokamak::SampleRow* nearestSample(const std::vector<tokamak::SampleRow>& samples, qint64 step);

}  // namespace tokamak::ui
