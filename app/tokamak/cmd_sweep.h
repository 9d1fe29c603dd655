// `tokamak sweep --slurm`: a validated sweep submitted as one Slurm job array (cmd_sweep_slurm.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "engine/fleet/queue/sweep.h"
#include "engine/fleet/remote/slurm_script.h"

namespace tokamak {
class RunStore;
struct SweepStatus;
}  // namespace tokamak

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
// With early_stopping each task stops at its trial's first rung; after its training every task runs
// `tokamak sweep advance`, which is advance_slurm_sweep.
void submit_sweep_to_slurm(const SweepPlan& plan, SweepSlurmArgs args);

// ASHA on Slurm, decided where the store is (a task's batch host, or `sweep status`): every trial of the sweep
// whose job ended is settled from its run folder (rung reached, done or failed), ASHA promotes from the store
// (engine/fleet/queue/sweep_store.h, as the local worker does), and each promoted trial is claimed and submitted as
// one job that resumes its run (resources from JOB_FILE, the sweep folder's slurm-job.json). Safe to run from
// several tasks at once: decisions and claims are transactions of the store. One line per thing done to note.
void advance_slurm_sweep(RunStore& store, int64_t sweep_id, const std::string& job_file,
                         const std::function<void(const std::string&)>& note);
// The slurm-job.json a Slurm sweep's trials name in their run folders' slurm.json ("" when none does).
std::string sweep_job_file_of(const SweepStatus& s);

}  // namespace tokamak::cli
