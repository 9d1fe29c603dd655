// Run identity, run folder and detaching (see run_session.h).
#include "app/tokamak/run_session.h"

#include <unistd.h>

#include <cstdlib>

#include "engine/device/device.h"
#include "engine/train/trainer.h"
#include "engine/core/run/run_launch.h"
#include "engine/core/store/run_store.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/core/util/error.h"
#include "engine/core/util/files.h"

namespace tokamak::cli {

Config resolved_setup(Config c) {
  c.speed.precision = run_precision(c);
  c.speed.layers = resolved_layers(c, c.speed.precision);
  return c;
}

RunIdentity identify_run(const Config& c) {
  RunIdentity id;
  id.name = c.name.empty() ? default_run_name(c) : c.name;
  const char* given = std::getenv("TOKAMAK_RUN_UID");
  // A queue's or Slurm's trial is named by its row: resuming it from another run's checkpoint is refused here,
  // before its folder or its store row exist.
  if (!c.checkpoint.resume.empty() && given && *given) check_checkpoint_owner(c.checkpoint.resume, given);
  id.uid = !c.checkpoint.resume.empty() ? read_checkpoint_info(c.checkpoint.resume).run_uid
           : given && *given            ? std::string(given)
                                        : new_run_uid();
  id.folder = RunFolder{run_folder_path(id.name, id.uid)};
  return id;
}

void open_run_folder(const RunIdentity& id) {
  const RunFolder& f = id.folder;
  const long owner = read_pid(f);
  if (owner > 0 && owner != ::getpid() && owner != ::getppid() && run_process_alive(f))
    throw Error("run " + id.uid + " (" + id.name + ") is still being trained by process " + std::to_string(owner) +
                    " on this machine",
                "stop that run first (`tokamak runs control " + id.uid + " stop`), then resume; or wait until it ends");
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
