// What `tokamak train` keeps in its run folder (engine/base/run/run_folder.h), and `train --detach`. The CLI,
// not the trainer, names the run (uid and folder) before training, so that a detached run's folder can be
// printed before it has started and a reader can follow it from the first line.
#pragma once
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_identity.h"

namespace tokamak::cli {

// Precision and layers made concrete for this machine (`auto` → what it runs): done once per process, by the
// command, before the run is named; the trainer only checks what it is given.
Config resolved_setup(Config c);

// identify_run (engine/base/run/run_identity.h) with $TOKAMAK_RUN_UID as the given uid: the launcher and
// --detach set it for the processes they start. C is resolved (resolved_setup): the name says what is trained.
RunIdentity identify_run_here(const Config& c);

// Creates the folder and run.json (kept when the folder is a resumed run's). Refuses a folder whose owner is
// another live process: two processes must never train one run.
void open_run_folder(const RunIdentity& id);

// `train --detach`: the run started as the queue worker and the studio start one (start_run_detached,
// engine/base/run/run_launch.h): config.json in its folder, `tokamak-engine train --config FOLDER/config.json
// ARGS...` in a new session (setsid: not a child of the login, so a closed ssh connection does not reach it),
// stdout and stderr to the run's output.log, stdin from /dev/null. The config travels as a file because the
// command line that was typed may have read it from stdin (`--config /dev/stdin`, how the studio sends one
// over ssh). Returns the pid once the engine runs (its pid file written).
long start_detached(const RunIdentity& id, const std::string& config_json, const std::vector<std::string>& args);

}  // namespace tokamak::cli
