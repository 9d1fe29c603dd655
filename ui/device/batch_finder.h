// BatchFinder: "find largest batch" on a GPU. Trains two steps at batch 1, 2, 4, … on a background thread
// until the device runs out of memory, and reports the largest batch that trained. On a CPU memory is not
// what limits the batch, so the setup panel offers this only for CUDA devices.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "engine/config/config.h"

class QThread;

namespace tokamak::ui {

class BatchFinder : public QObject {
  Q_OBJECT
 public:
  explicit BatchFinder(QObject* parent = nullptr) : QObject(parent) {}
  ~BatchFinder() override;

  void start(const Config& config);
  void cancel();
  bool isRunning() const { return thread_ != nullptr; }

 Q_SIGNALS:
  void tried(qint64 batch, bool fits);
  // largest = 0 when even batch 1 did not fit; error is set when a try failed for another reason.
  void finished(qint64 largest, const QString& error);

 private:
  QThread* thread_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
};

}  // namespace tokamak::ui
