// Starting a run detached from a LibTorch-free process (the queue worker): what `tokamak train --detach` does,
// with the uid and folder chosen by the caller beforehand, so that whoever started it can die at any moment
// and a successor still knows, from the run folder alone, whether the run was started (docs/ARCHITECTURE.md,
// "Queue and sweeps").
#pragma once
#include <string>
#include <vector>

#include "engine/core/run/run_folder.h"

namespace tokamak {

// Starts `ENGINE ARGS...` in a session of its own with TOKAMAK_RUN_UID=uid, stdin from /dev/null and
// stdout/stderr appended to the folder's output.log. The child writes the pid file before exec and dies with
// this process until it has (PR_SET_PDEATHSIG), so "no pid file" means "not started" to any later reader.
// The calling process must be single-threaded (the child allocates between fork and exec). Returns the pid.
// ENV adds KEY=VALUE entries (the queue's CUDA_VISIBLE_DEVICES), each replacing this process's own.
long launch_detached(const std::string& engine, const std::vector<std::string>& args, const RunFolder& folder,
                     const std::string& uid, const std::vector<std::string>& env = {});

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
