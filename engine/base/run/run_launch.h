// The one way a run is started detached — by the queue worker, `tokamak train --detach` and the studio — with
// the uid and folder chosen by the caller beforehand, so that whoever started it can die at any moment and a
// successor still knows, from the run folder alone, whether the run was started (docs/ARCHITECTURE.md,
// "Queue and sweeps").
#pragma once
#include <string>
#include <vector>

#include "engine/base/run/run_folder.h"

namespace tokamak {

// Starts `ENGINE ARGS...` in a session of its own with TOKAMAK_RUN_UID=uid, stdin from /dev/null and
// stdout/stderr appended to the folder's output.log. The pid file is written before the child execs, and the
// child dies with this process until then (PR_SET_PDEATHSIG), so "no pid file" means "not started" to any later
// reader. Between fork and exec the child only makes system calls, so the caller may have threads (the studio):
// it waits for the pid file on a socket, takes the default signal handling, and keeps none of the caller's other
// file descriptors. Returns once the engine runs (exec done): the pid; an exec that failed throws its one line.
// The child is this process's: a long-lived caller reaps it (a zombie reads as ended, run_folder.h). ENV adds
// KEY=VALUE entries (the queue's CUDA_VISIBLE_DEVICES), each replacing this process's own.
long launch_detached(const std::string& engine, const std::vector<std::string>& args, const RunFolder& folder,
                     const std::string& uid, const std::vector<std::string>& env = {});

// A run started detached from its config, as the queue worker starts one: the folder (run.json; kept when it
// exists: a resumed run's), CONFIG_JSON as its config.json (the child reads it: the command that was typed may
// have read its config from stdin), then launch_detached(ENGINE train --config FOLDER/config.json ARGS...).
// The studio's Start, `tokamak train --detach` and the queue's worker (ENV: its CUDA_VISIBLE_DEVICES) all start a
// run so. Returns the pid.
long start_run_detached(const std::string& engine, const RunFolder& folder, const std::string& uid,
                        const std::string& name, const std::string& config_json, const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {});

// The child's environment: BASE (a null-terminated KEY=VALUE array, as environ) without the keys that
// TOKAMAK_RUN_UID=UID and ENV set, then those.
std::vector<std::string> child_environment(const char* const* base, const std::string& uid,
                                           const std::vector<std::string>& env);

// tokamak-engine beside the running program (/proc/self/exe's folder).
std::string engine_beside_self();

// The NVIDIA GPUs this machine has, counted without LibTorch (/dev/nvidiaN), for config_problems() in the
// LibTorch-free front; the run checks again with LibTorch's count when it starts.
int gpus_here();

}  // namespace tokamak
