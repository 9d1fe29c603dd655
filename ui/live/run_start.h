// This computer's run started from the studio as the queue worker starts one (engine/base/run/run_launch.h:
// start_run_detached): named and given its uid and folder here, its config.json written, and tokamak-engine
// started in a session of its own by this process, with no program in between, so the run outlives the
// studio and is followed through its folder like any other.
#pragma once
#include <QString>

#include "engine/base/config/config.h"

namespace tokamak::ui {

struct StartedRun {
  QString uid, name, folder;
  qint64 pid = 0;
};

// Names the run as `tokamak train` does (its name, else the default name of its resolved setup; a resumed
// checkpoint's uid, else a new one), refuses a folder whose run is still training, and starts it (--db DB
// unless ""). Throws with the one line that says why it did not start.
StartedRun startLocalRun(const Config& config, const QString& engine, const QString& db);

}  // namespace tokamak::ui
