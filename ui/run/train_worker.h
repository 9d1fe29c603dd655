// TrainWorker: runs one training run on its QThread. It records the run into the store (StoreSink) and hands
// every event to the GUI through the EventBridge; a config or data error that the engine throws before the
// run starts arrives at the bridge as an end event with status "failed", like any other failure.
#pragma once
#include <QObject>
#include <string>

#include "engine/config/config.h"
#include "engine/train/trainer.h"

namespace tokamak::ui {

class EventBridge;

class TrainWorker : public QObject {
  Q_OBJECT
 public:
  TrainWorker(Config config, std::string dbPath, EventBridge* bridge, TrainControl* control);

 public Q_SLOTS:
  void run();

 Q_SIGNALS:
  void finished();

 private:
  Config config_;
  std::string dbPath_;
  EventBridge* bridge_;
  TrainControl* control_;
};

}  // namespace tokamak::ui
