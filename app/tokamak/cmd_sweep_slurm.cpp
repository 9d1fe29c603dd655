// submit_sweep_to_slurm (see cmd_sweep.h): on Slurm the scheduler is the queue, so a sweep is one job array.
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_sweep.h"
#include "engine/remote/run_folder.h"
#include "engine/remote/slurm_client.h"
#include "engine/store/run_store.h"
#include "engine/store/sweep_store.h"
#include "engine/util/error.h"
#include "engine/util/files.h"

namespace tokamak::cli {

void submit_sweep_to_slurm(const SweepPlan& plan, SweepSlurmArgs a) {
  SlurmJobSpec& s = a.spec;
  if (plan.asha.min_steps > 0)
    throw Error("early_stopping with --slurm: not implemented yet",
                "leave early_stopping out (every trial then trains to the end as one task of the array), or sweep "
                "on this computer's queue");
  if (s.partition.empty()) throw Error("--slurm needs --partition", "add --partition NAME (`sinfo` lists them)");
  if (a.time.empty()) throw Error("--slurm needs a time limit per trial", "add --time HH:MM:SS");
  if (s.gpus_per_node <= 0 && s.ntasks_per_node <= 0)
    throw Error("how many ranks per trial?", "add --gpus-per-node G (GPU nodes) or --ntasks-per-node N (CPU nodes)");
  s.time_limit_s = parse_slurm_time(a.time);
  std::vector<Config> configs;
  for (const SweepTrial& t : plan.trials) {
    Config c = t.config;
    c.dist.gpus = s.nodes * s.tasks_per_node();  // the world size srun gives each trial
    validate_config(c, s.gpus_per_node);
    configs.push_back(c);
  }
  const SlurmClient slurm{CommandHost()};
  slurm.require_sbatch();
  slurm.require_partition(s.partition);

  const std::string sweep_uid = new_run_uid();
  const std::string sweep_folder = data_dir() + "/sweeps/" + safe_file_name(plan.name) + "-" + sweep_uid.substr(0, 8);
  make_dirs(sweep_folder);
  std::vector<SlurmArrayTask> tasks;
  std::vector<std::pair<std::string, std::string>> runs;  // uid, folder per trial
  for (size_t i = 0; i < configs.size(); ++i) {
    const std::string uid = new_run_uid(), folder = run_folder_path(configs[i].name, uid);
    const std::string checkpoints = configs[i].train.checkpoint_dir.empty() ? folder : configs[i].train.checkpoint_dir;
    create_run_folder(RunFolder{folder}, {uid, configs[i].name, this_host(), folder, now_seconds()});
    write_file_atomically(folder + "/config.json", config_to_json(configs[i], 2));
    tasks.push_back({uid, folder, checkpoints});
    runs.emplace_back(uid, folder);
  }
  s.job_name = "tokamak-sweep-" + safe_file_name(plan.name);
  std::error_code ec;  // the nodes run this very program unless told otherwise (a shared install, as slurm submit)
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  s.tokamak = !a.tokamak.empty() ? a.tokamak : ec ? std::string("tokamak") : self;
  s.db = a.db;
  const std::string script_path = sweep_folder + "/job.sh";
  write_file_atomically(script_path, slurm_array_script(s, tasks, sweep_folder));
  long job = 0;
  try {
    job = slurm.submit(script_path);
  } catch (...) {
    for (const auto& r : runs) remove_tree(r.second);  // nothing left that looks like a crashed run
    remove_tree(sweep_folder);
    throw;
  }
  for (size_t i = 0; i < runs.size(); ++i)
    write_file_atomically(
        runs[i].second + "/slurm.json",
        nlohmann::json({{"job_id", job}, {"array_task_id", i}, {"host", slurm.host().key()}}).dump() + "\n");
  RunStore store(a.db);
  const int64_t id = SweepStore(store).queue_plan(plan, "slurm", &runs);
  if (a.json)
    std::printf(
        "%s\n",
        nlohmann::json(
            {{"sweep_id", id}, {"name", plan.name}, {"job_id", job}, {"trials", runs.size()}, {"script", script_path}})
            .dump()
            .c_str());
  else
    std::printf("sweep %lld (%s): job array %ld with %zu trials\nwatch it: tokamak sweep status %lld\n",
                static_cast<long long>(id), plan.name.c_str(), job, runs.size(), static_cast<long long>(id));
}

}  // namespace tokamak::cli
