// SampleProcess: "sample now" as a child `tokamak-engine generate` process. It loads the run's latest checkpoint
// into a model of its own and writes the text on stdout, the same steps as `tokamak generate`; the training
// run is not disturbed (it only shares the CPU or GPU), and a crash while sampling cannot take the window.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>

namespace tokamak::ui {

struct SampleNowRequest {
  QString checkpoint;
  qint64 step = 0;  // the checkpoint's step, reported back with the text
  QString prompt;
  int tokens = 48;
  double temperature = 0.8;
  int topK = 40;
  quint64 seed = 1337;
};

class ChildProcess;

class SampleProcess : public QObject {
  Q_OBJECT
 public:
  explicit SampleProcess(QObject* parent = nullptr);

  bool start(const SampleNowRequest& request);  // false while one is running
  bool isRunning() const;
  void cancel();  // ends the child at once (there is nothing to save); finished() reports "cancelled"

 Q_SIGNALS:
  // error is set (and text empty) when it failed.
  void finished(qint64 step, const QString& text, const QString& error);

 private:
  ChildProcess* job_;
  qint64 step_ = 0;
};

}  // namespace tokamak::ui
