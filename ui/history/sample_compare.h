// SampleCompare: the compared runs' samples side by side at one step — a column per run holding the sample
// nearest the chosen step (each run samples on its own schedule), with its step and prompt, so what the runs
// write from the same prompt at the same point of training can be read across. A prompt picker keeps only
// the samples written from one prompt (runs with several sample prompts otherwise mix them).
#pragma once
#include <QWidget>
#include <vector>

#include "engine/base/store/run_store.h"

class QComboBox;
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
  // Only samples from this prompt ("" = any); false when no run sampled from it.
  bool setPrompt(const QString& prompt);
  QStringList prompts() const;  // the prompts the runs sampled from, in the order first seen
  QTableWidget* table() const { return table_; }

 private:
  void rebuild();

  QStringList labels_;
  std::vector<std::vector<tokamak::SampleRow>> samples_;
  QSpinBox* step_;
  QComboBox* prompt_;
  QTableWidget* table_;
};

// The sample nearest `step` (the earlier one on a tie), among those from `prompt` when it is not null;
// nullptr when there is none.
const tokamak::SampleRow* nearestSample(const std::vector<tokamak::SampleRow>& samples, qint64 step,
                                        const std::string* prompt = nullptr);

}  // namespace tokamak::ui
