// TrainWorker: train() with the store and the bridge as sinks, on the worker thread.
#include "ui/run/train_worker.h"

#include <exception>

#include "engine/store/store_sink.h"
#include "ui/run/event_bridge.h"

namespace tokamak::ui {

TrainWorker::TrainWorker(Config config, std::string dbPath, EventBridge* bridge, TrainControl* control)
    : config_(std::move(config)), dbPath_(std::move(dbPath)), bridge_(bridge), control_(control) {}

void TrainWorker::run() {
  try {
    // The store comes first: when the bridge hears of a start or an end, its rows are already committed, so
    // the runs browser refreshed on that signal sees them.
    StoreSink store(dbPath_);
    FanOutSink sinks;
    sinks.add(&store);
    sinks.add(bridge_);
    train(config_, sinks, control_);
  } catch (const std::exception& e) {
    EndEvent end;
    end.status = "failed";
    end.error = e.what();
    bridge_->on_end(end);
  }
  Q_EMIT finished();
}

}  // namespace tokamak::ui
