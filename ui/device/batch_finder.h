// BatchFinder: "find largest batch" on a GPU. Runs `tokamak-engine find-batch --json` in a child process, which
// trains two steps at batch 1, 2, 4, … until the device runs out of memory, and reports each try as it comes
// and the largest batch that trained. In a child, a try's out-of-memory and the CUDA allocator's cached blocks
// end with the child rather than staying in the studio and taking memory from the run being sized. On a CPU
// memory is not what limits the batch, so the setup panel offers this only for CUDA devices.
#pragma once
#include <QObject>
#include <QString>
#include <QTemporaryFile>
#include <memory>

#include "engine/base/config/config.h"

namespace tokamak::ui {

class ChildProcess;

class BatchFinder : public QObject {
  Q_OBJECT
 public:
  explicit BatchFinder(QObject* parent = nullptr);

  void start(const Config& config);
  void cancel();
  bool isRunning() const;

 Q_SIGNALS:
  void tried(qint64 batch, bool fits);
  // largest = 0 when even batch 1 did not fit; error is set when a try failed for another reason.
  void finished(qint64 largest, const QString& error);

 private:
  ChildProcess* child_;
  std::unique_ptr<QTemporaryFile> config_;  // the setup, as --config for the child
  qint64 largest_ = -1;                     // from the child's answer; -1 until it came
};

}  // namespace tokamak::ui
