// `tokamak sweep --slurm`: a validated sweep submitted as one Slurm job array (cmd_sweep_slurm.cpp).
#pragma once
#include <string>

#include "engine/config/sweep.h"
#include "engine/remote/slurm_script.h"

namespace tokamak::cli {

struct SweepSlurmArgs {
  SlurmJobSpec spec;  // partition, account, qos, nodes, gpus/ntasks per node; the rest is filled here
  std::string time, tokamak, db;
  bool json = false;
};

// Writes each trial's run folder (config.json, and slurm.json once sbatch answered) and the array's script
// (data_dir()/sweeps/NAME-ID/job.sh), submits it, and records the sweep and its trials (target "slurm") in
// the run store, so `sweep status` shows them. Nothing is written when a check fails; folders are removed
// when sbatch refuses the job.
void submit_sweep_to_slurm(const SweepPlan& plan, SweepSlurmArgs args);

}  // namespace tokamak::cli
