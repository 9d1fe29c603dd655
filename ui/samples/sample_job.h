// SampleJob: "sample now". The trainer has no on-demand sampling, so this loads the run's latest checkpoint
// into a model of its own on a background thread and generates from the user's prompt, the same steps as
// `tokamak generate`. The training run is not disturbed (it only shares the CPU or GPU).
#pragma once
#include <QObject>
#include <QString>

class QThread;

namespace tokamak::ui {

struct SampleRequest {
  QString checkpoint;
  QString prompt;
  int tokens = 48;
  double temperature = 0.8;
  int topK = 40;
  quint64 seed = 1337;
};

class SampleJob : public QObject {
  Q_OBJECT
 public:
  explicit SampleJob(QObject* parent = nullptr) : QObject(parent) {}
  ~SampleJob() override;

  bool start(const SampleRequest& request);  // false while one is running
  bool isRunning() const { return thread_ != nullptr; }

 Q_SIGNALS:
  // step = the checkpoint's step; error is set (and text empty) when it failed.
  void finished(qint64 step, const QString& text, const QString& error);

 private:
  QThread* thread_ = nullptr;
};

// Blocking: loads the checkpoint and generates. Throws tokamak::Error on a bad checkpoint.
QString generateFromCheckpoint(const SampleRequest& request, qint64* step);

}  // namespace tokamak::ui
