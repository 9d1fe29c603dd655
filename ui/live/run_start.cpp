// startLocalRun (see run_start.h).
#include "ui/live/run_start.h"

#include "engine/base/machine/precision_here.h"
#include "engine/base/run/run_identity.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/util/error.h"

namespace tokamak::ui {

StartedRun startLocalRun(const Config& config, const QString& engine, const QString& db) {
  Config c = config;
  if (c.name.empty()) {
    // The name says what is trained: `auto` precision and layers as this machine resolves them, from the same
    // facts the run reads with LibTorch (precision_here.h), so the studio loads none.
    Config resolved = c;
    resolved.speed.precision = precision_here(c.speed.precision, c.device);
    resolved.speed.layers = resolved_layers(resolved, resolved.speed.precision);
    c.name = default_run_name(resolved);
  }
  const RunIdentity id = identify_run(c);
  refuse_live_run(id);
  std::vector<std::string> args;
  if (!db.isEmpty()) args = {"--db", db.toStdString()};
  const long pid = start_run_detached(engine.toStdString(), id.folder, id.uid, id.name, config_to_json(c, 2), args);
  return {QString::fromStdString(id.uid), QString::fromStdString(id.name), QString::fromStdString(id.folder.path), pid};
}

}  // namespace tokamak::ui
