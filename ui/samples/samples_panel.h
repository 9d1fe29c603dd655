// SamplesPanel: the text the model writes while it learns, newest last, each with its step; and a prompt box
// with "sample now", which generates from the run's latest checkpoint (enabled once one exists).
#pragma once
#include <QWidget>
#include <vector>

#include "engine/train/events.h"

class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;

namespace tokamak::ui {

class SampleJob;

class SamplesPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SamplesPanel(QWidget* parent = nullptr);

  void appendSamples(const std::vector<SampleEvent>& samples);
  void setCheckpoint(const QString& path);  // "" = none yet: "sample now" disabled
  void clear();
  int sampleCount() const { return count_; }
  QString text() const;
  SampleJob* job() const { return job_; }

 public Q_SLOTS:
  void sampleNow();

 private:
  void append(qint64 step, const QString& text, const QString& origin);

  QPlainTextEdit* view_;
  QLineEdit* prompt_;
  QSpinBox* tokens_;
  QPushButton* sampleNow_;
  SampleJob* job_;
  QString checkpoint_;
  int count_ = 0;
};

}  // namespace tokamak::ui
