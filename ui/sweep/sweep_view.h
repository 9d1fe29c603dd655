// SweepView: the studio's "Sweeps" page — one sweep at a time, picked from the run store's sweeps, refreshed
// while its trials train: the metric against each swept key, parallel coordinates, the trials ranked, which
// key matters most (Spearman's ρ from engine/fleet/queue/sweep_importance.h), "Train the best longer" (the best
// trial's config with more steps, queued on this computer's queue like `tokamak queue add`) and exports
// (the ranked table as CSV/JSON/Markdown, the plots as PNG/PDF/SVG). Reads the store as the runs page does
// (a few small queries on a 1 s timer while shown); every child process runs without blocking the window.
#pragma once
#include <QList>
#include <QString>
#include <QWidget>
#include <memory>

#include "ui/sweep/sweep_results.h"

namespace tokamak {
class RunStore;
}
class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;
class QTimer;

namespace tokamak::ui {

class ChildProcess;

class ParallelCoordinates;
class SweepKeyPlots;

class SweepView : public QWidget {
  Q_OBJECT
 public:
  explicit SweepView(QWidget* parent = nullptr);
  ~SweepView() override;
  void setDatabase(const QString& path);  // "" = the default run store
  void setPollInterval(int ms);

  // Reads the store again: the picker's sweeps and the shown sweep.
  void refresh();
  bool showSweep(qint64 id);
  qint64 currentSweep() const { return current_; }
  const SweepResults& results() const { return results_; }

  QComboBox* picker() const { return picker_; }
  QTableWidget* table() const { return table_; }
  SweepKeyPlots* keyPlots() const { return keyPlots_; }
  ParallelCoordinates* parallel() const { return parallel_; }
  QString importanceText() const;
  QString message() const;  // the last notice or error shown under the buttons

  // The best trial's config with train.steps = steps (and the name NAME-longer-STEPS), queued through
  // `tokamak queue add`; false when there is no best trial yet or a job is going. Ends in trainQueued().
  bool trainBestLonger(qint64 steps);
  bool isQueuing() const { return process_ != nullptr; }
  // format: csv | json | md. "" on success, else why. Written whole or not at all.
  QString exportTable(const QString& format, const QString& path, bool replace = false) const;
  // The parallel coordinates at `path` and each key's plot beside it (STEM-KEY.EXT); format from the suffix.
  // REPLACE covers `path`, REPLACE_KEYS the key plots the person was asked about (saveSweepPlots).
  QString exportPlots(const QString& path, QStringList* written = nullptr, bool replace = false,
                      const QStringList& replaceKeys = {}) const;

 Q_SIGNALS:
  void newSweepRequested();
  void trainQueued(qint64 queueId, const QString& name);  // queueId 0: it failed (see message())

 protected:
  void showEvent(QShowEvent* event) override;
  void hideEvent(QHideEvent* event) override;

 private:
  void build();
  void askTrainLonger();
  void setMessage(const QString& text, bool error = false);
  tokamak::RunStore* store();

  QString db_;
  std::unique_ptr<tokamak::RunStore> store_;
  qint64 current_ = 0;
  SweepResults results_;
  QString fingerprint_;
  QComboBox* picker_;
  QLabel *state_, *importance_, *message_;
  QPushButton *longer_, *export_;
  QTableWidget* table_;
  SweepKeyPlots* keyPlots_;
  ParallelCoordinates* parallel_;
  QTimer* poll_;
  ChildProcess* process_ = nullptr;  // `tokamak queue add` while it queues
  QString configFile_;
};

}  // namespace tokamak::ui
