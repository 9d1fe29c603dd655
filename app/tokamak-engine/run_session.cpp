// Run identity, run folder and detaching (see run_session.h).
#include "app/tokamak-engine/run_session.h"

#include <unistd.h>

#include <cstdlib>

#include "engine/torch/device/device.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/store/run_store.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {

Config resolved_setup(Config c) {
  c.speed.precision = run_precision(c);  // (a Precision)
  c.speed.layers = resolved_layers(c, c.speed.precision);
  return c;
}

RunIdentity identify_run_here(const Config& c) {
  const char* given = std::getenv("TOKAMAK_RUN_UID");
  return tokamak::identify_run(c, given ? given : "");
}

void open_run_folder(const RunIdentity& id) {
  const RunFolder& f = id.folder;
  refuse_live_run(id);
  if (path_exists(f.info_file())) {
    make_dirs(f.control_dir());
    return;
  }
  create_run_folder(f, {id.uid, id.name, this_host(), f.path, now_seconds()});
}

long start_detached(const RunIdentity& id, const std::string& config_json, const std::vector<std::string>& more) {
  return start_run_detached(engine_beside_self(), id.folder, id.uid, id.name, config_json, more);
}

}  // namespace tokamak::cli
