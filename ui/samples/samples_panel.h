// SamplesPanel: the text the model writes while it learns, newest last, each with its step; and a prompt box
// with "sample now", which generates from the run's latest checkpoint in a child engine process (enabled once
// a checkpoint exists; ui/live/sample_process.h).
#pragma once
#include <QWidget>
#include <vector>

#include "engine/base/run/events.h"

class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace tokamak::ui {

class SampleProcess;

class SamplesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SamplesPanel(QWidget* parent = nullptr);

  void appendSamples(const std::vector<SampleEvent>& samples);
  void setCheckpoint(const QString& path, qint64 step = 0);  // "" = none yet: "sample now" disabled
  // A run on an SSH host is live: "sample now" emits sampleRequested (the run samples at its next step, with
  // its own prompt) instead of sampling a local checkpoint.
  void setHostRun(bool on);
  void clear();
  int sampleCount() const { return count_; }
  QString text() const;
  SampleProcess* job() const { return job_; }
  bool isSampling() const;

 public Q_SLOTS:
  void sampleNow();

 Q_SIGNALS:
  void sampleRequested();

 private:
  void append(qint64 step, const QString& text, const QString& origin);

  QPlainTextEdit* view_;
  QLineEdit* prompt_;
  QSpinBox* tokens_;
  QPushButton* sampleNow_;
  SampleProcess* job_;
  QString checkpoint_;
  qint64 checkpointStep_ = 0;
  int count_ = 0;
  bool hostRun_ = false;
};

}  // namespace tokamak::ui
