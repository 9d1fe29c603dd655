// SetupPanel: everything that defines a run — dataset, model, training numbers, device, speed-up switches —
// plus saved setups, ladders from experiments/, and the config problems that keep Start disabled. It reads
// and writes the engine's Config through KeyBindings, so every widget is a config key.
#pragma once
#include <QPointer>
#include <QStringList>
#include <QWidget>

#include "engine/base/config/config.h"

class QLabel;
class QListWidget;
class QPushButton;
class QTimer;

namespace tokamak::ui {

class BatchFinder;
class DatasetBox;
class KeyBindings;
class ModelBox;
class SectionColumns;
class SwitchesBox;
class SpeedrunBox;
class WhereBox;

class SetupPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SetupPanel(QWidget* parent = nullptr);
  ~SetupPanel() override;

  Config config() const;  // what Start would run now
  void setConfig(const Config& config);
  QStringList problems() const { return problems_; }
  bool canStart() const { return problems_.isEmpty(); }
  void setEditable(bool editable);  // read-only while a run uses the setup
  void showMeasuredPeak(qint64 bytes, const QString& device);
  void clearResume();
  // Starts the model from the Hugging Face GPT-2 weights at `path` (folder or model.safetensors): sets
  // model.init_from and the model's sizes to the weights'. Returns "" or why it cannot.
  QString startFromWeights(const QString& path);
  void useRandomInit();

  DatasetBox* datasetBox() const { return dataset_; }
  ModelBox* modelBox() const { return model_; }
  SwitchesBox* switchesBox() const { return switches_; }
  KeyBindings* keys() const { return keys_; }
  // ui/remote: this computer or an SSH host. Not in the panel's sections: MainWindow puts it in a toolbar.
  WhereBox* whereBox() const;
  SectionColumns* sections() const { return sections_; }
  // The narrowest the panel can be with its sections in `columns` columns (1 or 2), nothing cut.
  int widthFor(int columns) const;

 public Q_SLOTS:
  void saveSetupAs();
  void loadSetupFrom();
  void openLadder(const QString& path = {});
  void findLargestBatch();
  void chooseWeights();
  // Recomputes problems, estimate and switch availability now (otherwise coalesced on a 0 ms timer).
  void refreshNow();

 Q_SIGNALS:
  void configChanged();
  void problemsChanged(bool canStart);

 private:
  QWidget* trainingBox();
  void scheduleRefresh();
  void showWeights(const Config& c);

  KeyBindings* keys_;
  SectionColumns* sections_;
  QWidget* form_;  // the sections' content: disabled while a run uses the setup, still scrollable
  DatasetBox* dataset_;
  QPointer<WhereBox> where_;  // its toolbar may be destroyed before this panel
  ModelBox* model_;
  SwitchesBox* switches_;
  SpeedrunBox* speedrun_ = nullptr;  // the speedrun's switches (ui/setup/speedrun_box.h)
  BatchFinder* finder_;
  QPushButton* findBatch_;
  QLabel* resume_;
  QPushButton* clearResume_;
  QListWidget* problemList_;
  QTimer* refresh_;
  Config base_;  // keys without a widget (checkpoint.resume, sampling settings, …) keep the loaded values
  QStringList problems_;
  QString weightsPath_;            // model.init_from whose parameters were counted
  qint64 weightsParameters_ = -1;  // the count, -1 when unknown
};

}  // namespace tokamak::ui
