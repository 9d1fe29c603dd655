// Reading the launcher's environment (see dist_env.h). torchrun's names come first because our own launcher
// uses them too; Slurm's are read only inside an srun step, so a bare `tokamak train` in a batch script
// (which also sees SLURM_PROCID=0 and SLURM_NTASKS) stays a single process instead of waiting for peers.
#include "engine/torch/parallel/dist_env.h"

#include <algorithm>
#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

using Getenv = std::function<const char*(const char*)>;

bool has(const Getenv& env, const char* name) {
  const char* v = env(name);
  return v && *v;
}

// The leading integer of a variable: Slurm writes per-node counts as "8(x2)".
int integer(const Getenv& env, const char* name, int fallback) {
  const char* v = env(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (end == v || n < 0 || n > 1 << 24)
    throw Error(std::string("environment variable ") + name + "='" + v + "' is not a count or rank",
                "unset it, or let torchrun / srun set it");
  return static_cast<int>(n);
}

std::string text(const Getenv& env, const char* name, const std::string& fallback) {
  return has(env, name) ? std::string(env(name)) : fallback;
}

}  // namespace

DistEnv dist_env_from_environment(const Getenv& given) {
  Getenv env = given ? given : Getenv([](const char* name) { return std::getenv(name); });
  DistEnv d;
  if (has(env, "RANK") && has(env, "WORLD_SIZE")) {
    d.source = has(env, "TOKAMAK_LAUNCHER") ? "tokamak" : "torchrun";
    d.rank = integer(env, "RANK", 0);
    d.world_size = integer(env, "WORLD_SIZE", 1);
    d.local_rank = integer(env, "LOCAL_RANK", d.rank);
    d.local_world_size = integer(env, "LOCAL_WORLD_SIZE", d.world_size);
    // torchrun's agent serves the store at MASTER_ADDR:MASTER_PORT and says so; so does our launcher.
    std::string agent = text(env, "TORCHELASTIC_USE_AGENT_STORE", "");
    d.store_hosted = agent == "True" || agent == "true" || agent == "1";
    d.attempt = integer(env, "TORCHELASTIC_RESTART_COUNT", 0);
  } else if (has(env, "SLURM_PROCID") && has(env, "SLURM_STEP_NUM_TASKS")) {
    d.source = "slurm";
    d.rank = integer(env, "SLURM_PROCID", 0);
    d.world_size = integer(env, "SLURM_STEP_NUM_TASKS", 1);
    d.local_rank = integer(env, "SLURM_LOCALID", 0);
    int nodes = integer(env, "SLURM_STEP_NUM_NODES", integer(env, "SLURM_NNODES", 1));
    d.local_world_size = integer(env, "SLURM_STEP_TASKS_PER_NODE", (d.world_size + nodes - 1) / std::max(1, nodes));
    if (nodes > 1 && !has(env, "MASTER_ADDR"))
      throw Error("srun started " + std::to_string(d.world_size) + " ranks on " + std::to_string(nodes) +
                      " nodes but MASTER_ADDR is not set",
                  "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1) in the batch "
                  "script (see docs/multi-gpu.md)");
  } else {
    return d;
  }
  d.master_addr = text(env, "MASTER_ADDR", "127.0.0.1");
  d.master_port = integer(env, "MASTER_PORT", 29500);
  if (d.world_size < 1 || d.rank >= d.world_size)
    throw Error("rank " + std::to_string(d.rank) + " is outside world size " + std::to_string(d.world_size) +
                    " (from " + d.source + "'s environment)",
                "check RANK/WORLD_SIZE (or SLURM_PROCID/SLURM_STEP_NUM_TASKS)");
  if (d.master_port < 1 || d.master_port > 65535)
    throw Error("MASTER_PORT=" + std::to_string(d.master_port) + " is not a TCP port",
                "use a free port in 1024..65535");
  if (d.local_world_size < 1 || d.local_rank >= std::max(d.local_world_size, 1)) d.local_world_size = d.local_rank + 1;
  return d;
}

std::vector<std::string> worker_environment(int rank, int world_size, int port) {
  return {"RANK=" + std::to_string(rank),
          "WORLD_SIZE=" + std::to_string(world_size),
          "LOCAL_RANK=" + std::to_string(rank),
          "LOCAL_WORLD_SIZE=" + std::to_string(world_size),
          "MASTER_ADDR=127.0.0.1",
          "MASTER_PORT=" + std::to_string(port),
          "TORCHELASTIC_USE_AGENT_STORE=True",
          "TOKAMAK_LAUNCHER=1"};
}

}  // namespace tokamak
