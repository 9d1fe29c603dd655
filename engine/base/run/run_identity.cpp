// See run_identity.h.
#include "engine/base/run/run_identity.h"

#include <unistd.h>

#include "engine/base/run/checkpoint_files.h"
#include "engine/base/util/error.h"

namespace tokamak {

RunIdentity identify_run(const Config& c, const std::string& given_uid) {
  RunIdentity id;
  id.name = c.name.empty() ? default_run_name(c) : c.name;
  if (!c.checkpoint.resume.empty()) {
    id.uid = checkpoint_run_uid(c.checkpoint.resume);
    if (!given_uid.empty() && id.uid != given_uid)
      throw Error("checkpoint '" + c.checkpoint.resume + "' belongs to run " + id.uid + ", not to run " + given_uid,
                  "resume a run from its own checkpoints (`tokamak runs show ID` lists them)");
  } else {
    id.uid = given_uid.empty() ? new_run_uid() : given_uid;
  }
  id.folder = RunFolder{run_folder_path(id.name, id.uid)};
  return id;
}

void refuse_live_run(const RunIdentity& id) {
  const long owner = read_pid(id.folder);
  if (owner <= 0 || owner == ::getpid() || owner == ::getppid() || !run_process_alive(id.folder)) return;
  throw Error("run " + id.uid + " (" + id.name + ") is still being trained by process " + std::to_string(owner) +
                  " on this machine",
              "stop that run first (`tokamak runs control " + id.uid + " stop`), then resume; or wait until it ends");
}

}  // namespace tokamak
