// Who this process is in a data-parallel group, read from the environment that a launcher sets: our own
// `tokamak train --gpus N`, torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or Slurm's srun
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; the master address still comes from MASTER_ADDR). No LibTorch
// here, so the CLI can decide between launching and working without paying for its headers.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

struct DistEnv {
  int rank = 0;                           // global rank, 0 .. world_size-1; rank 0 prints, records and checkpoints
  int world_size = 1;                     // processes in the group; 1 = no data parallelism
  int local_rank = 0;                     // rank on this machine: picks cuda:<local_rank>
  int local_world_size = 1;               // processes on this machine: divides the CPU cores among them
  std::string master_addr = "127.0.0.1";  // host of the TCPStore rendezvous
  int master_port = 29500;
  bool store_hosted = false;  // a launcher (ours or torchrun's agent) already serves the store: rank 0 is a client
  int attempt = 0;            // torchrun's restart count: each attempt keeps its keys apart in the agent's store
  std::string source;         // "tokamak", "torchrun", "slurm" or "" (single process), for messages

  bool distributed() const { return world_size > 1; }
};

// Reads the group from `getenv` (the process environment by default). Returns world_size 1 when no launcher
// variables are set; throws tokamak::Error on inconsistent values (rank outside the world, bad port, ...).
DistEnv dist_env_from_environment(const std::function<const char*(const char*)>& getenv = {});

// The variables our launcher gives worker `rank` of `world_size` on this machine ("NAME=value" strings).
std::vector<std::string> worker_environment(int rank, int world_size, int port);

}  // namespace tokamak
