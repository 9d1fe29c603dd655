// The batch script of a Slurm job that trains one Tokamak run (docs/REMOTE.md, "Slurm", explains it line by
// line). Text only: `tokamak slurm submit` writes it into the run folder and hands it to sbatch. Inside the
// job, srun starts one `tokamak train` per task with the environment engine/torch/parallel/dist_env.cpp reads
// (SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID; MASTER_ADDR/MASTER_PORT from the script), rank 0 writes
// the run folder and its journal, and a requeued job resumes from the newest checkpoint of the same run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct SlurmJobSpec {
  std::string partition, account, qos;  // account and qos: "" = the cluster's default
  int nodes = 1;
  int gpus_per_node = 0;    // > 0: one task per GPU (NCCL ranks)
  int ntasks_per_node = 0;  // CPU nodes: Gloo ranks per node (used when gpus_per_node is 0)
  int time_limit_s = 0;     // --time
  bool requeue = false;     // the job may be requeued (preemption, `scontrol requeue`) and resumes when it is
  int warn_s = 120;         // with requeue: the script asks to be requeued this long before the time limit
  std::string job_name;     // "tokamak-<run name>"
  std::string run_uid, run_folder;
  std::string checkpoint_dir;  // where the run's step_N.safetensors go (the run folder unless checkpoint.dir)
  std::string tokamak;         // the tokamak command on the cluster's nodes
  std::string db;              // --db for the ranks ("" = their default run store)
  int64_t halt_step = 0;       // > 0: the ranks stop with a checkpoint after this step (a sweep's rung)
  // A sweep's trial: after training, the job runs `tokamak sweep advance --job FILE --run UID`, which records
  // where the trial got to and submits the trials ASHA promotes (app/tokamak/cmd_sweep_slurm.cpp).
  std::string sweep_job_file;

  int tasks_per_node() const { return gpus_per_node > 0 ? gpus_per_node : ntasks_per_node; }
};

// "HH:MM:SS", "MM:SS", "MINUTES" or "D-HH[:MM[:SS]]" (sbatch's --time forms) in seconds; throws an Error
// naming the text otherwise.
int parse_slurm_time(const std::string& text);
std::string format_slurm_time(int seconds);  // D-HH:MM:SS when a day or more, else HH:MM:SS

// The whole script (bash), ending with a newline.
std::string slurm_job_script(const SlurmJobSpec& spec);

// A sweep as one job array (`tokamak sweep --slurm`): task i trains tasks[i] (its run folder holds its
// config.json) with spec's resources, each task a job of its own to Slurm (its own SLURM_JOB_ID, so its own
// MASTER_PORT); the array's output goes to SWEEP_FOLDER/task-%a.log until the task appends to its run's output.log.
struct SlurmArrayTask {
  std::string run_uid, run_folder, checkpoint_dir;
  int64_t halt_step = 0;  // early stopping: the trial's first rung (0 = train to the end)
};
std::string slurm_array_script(const SlurmJobSpec& spec, const std::vector<SlurmArrayTask>& tasks,
                               const std::string& sweep_folder);

// The script's lines that set MASTER_ADDR (and $master, how it was found, for the job's first line): the first
// node's Slurm name when it resolves, else that node's NodeAddr from `scontrol show node`.
std::string slurm_master_addr_lines();

// The port the ranks of job JOB_ID meet on (also written into the script, so both agree): 20000 + id % 40000,
// so two jobs sharing a first node rarely collide and a requeued job (same id) keeps its port.
int slurm_master_port(long job_id);

}  // namespace tokamak
