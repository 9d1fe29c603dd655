// startLocalRun (see run_start.h).
#include "ui/live/run_start.h"

#include "engine/core/machine/precision_here.h"
#include "engine/core/run/checkpoint_files.h"
#include "engine/core/run/run_folder.h"
#include "engine/core/run/run_launch.h"
#include "engine/core/util/error.h"

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
  const std::string uid =
      c.checkpoint.resume.empty() ? new_run_uid() : checkpoint_run_uid(c.checkpoint.resume);
  const RunFolder folder{run_folder_path(c.name, uid)};
  if (run_process_alive(folder))
    throw Error("run " + uid + " (" + c.name + ") is still being trained by process " +
                    std::to_string(read_pid(folder)) + " on this machine",
                "stop that run first, then resume; or wait until it ends");
  std::vector<std::string> args;
  if (!db.isEmpty()) args = {"--db", db.toStdString()};
  const long pid = start_run_detached(engine.toStdString(), folder, uid, c.name, config_to_json(c, 2), args);
  return {QString::fromStdString(uid), QString::fromStdString(c.name), QString::fromStdString(folder.path), pid};
}

}  // namespace tokamak::ui
