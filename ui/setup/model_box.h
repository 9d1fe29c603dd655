// ModelBox: the model's size (a preset, or layers/heads/width/context by hand), where its weights start
// (random, or GPT-2 weights in Hugging Face's format: model.init_from), its parameter count and the memory
// estimate for the chosen batch and switches (engine/base/plan/memory_estimate.h). After a run it shows
// the measured peak next to the estimate, so the estimate can be judged.
#pragma once
#include <QGroupBox>

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace tokamak {
struct Config;
}

namespace tokamak::ui {

class KeyBindings;

class ModelBox : public QGroupBox {
  Q_OBJECT
 public:
  ModelBox(KeyBindings* keys, QWidget* parent = nullptr);

  // Recomputes the parameter count and the memory estimate for this config.
  void showEstimate(const Config& config);
  // Bytes measured by the last run (peak RSS on a CPU, peak allocated on a GPU); 0 hides it.
  void showMeasuredPeak(qint64 bytes, const QString& device);
  QString estimateText() const;
  // Where the weights come from: "" = random initialisation, else the Hugging Face weights model.init_from names,
  // with the parameters the file holds against those of the model the sizes build (vocabulary unpadded); a
  // count of -1 is unknown (the file cannot be read: the problem list says why).
  void showWeights(const QString& initFrom, qint64 fileParameters = -1, qint64 modelParameters = -1);
  QString weightsText() const;

 Q_SIGNALS:
  void startFromWeightsClicked();
  void randomInitClicked();

 private:
  void presetChanged();

  KeyBindings* keys_;
  QComboBox* preset_;
  QSpinBox *layers_, *heads_, *width_, *context_;
  QLabel* params_;
  QLabel* estimate_;
  QLabel* measured_;
  QLabel* weights_;
  QPushButton* fromWeights_;
  QPushButton* randomInit_;
  bool filling_ = false;
};

}  // namespace tokamak::ui
