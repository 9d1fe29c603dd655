// A run's identity, decided in one place for every way a run starts (the CLI, the studio, the queue, Slurm and
// sweeps): its name, its uid and its folder, and the one refusal of a run whose process still trains it.
// LibTorch-free: the studio and the `tokamak` front name runs without loading it.
#pragma once
#include <string>

#include "engine/base/config/config.h"
#include "engine/base/run/run_folder.h"

namespace tokamak {

struct RunIdentity {
  std::string uid, name;
  RunFolder folder;
};

// The name: the config's, else the default name of C's setup, so C must come with `auto` made concrete
// (precision and layers as this machine runs them: the name says what is trained). The uid: a resumed run's
// checkpoint's, else GIVEN_UID (a queue row's, a Slurm job's, the launcher's), else a new one. A resume whose
// checkpoint belongs to another run than GIVEN_UID is refused here, before any folder or store row exists.
RunIdentity identify_run(const Config& c, const std::string& given_uid = "");

// The refusal while the run's process lives: a process other than this one and its parent (a launcher, a
// detaching front) that owns the folder and is alive. Two processes must never train one run.
void refuse_live_run(const RunIdentity& id);

}  // namespace tokamak
