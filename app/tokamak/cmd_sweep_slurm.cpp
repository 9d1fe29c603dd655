// submit_sweep_to_slurm and advance_slurm_sweep (see cmd_sweep.h): on Slurm the scheduler is the queue, so a
// sweep is one job array, and each promoted trial one more job that resumes its run.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_sweep.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_identity.h"
#include "engine/fleet/remote/slurm_client.h"
#include "engine/fleet/queue/sweep_settle.h"
#include "engine/base/store/run_store.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {

// The resources every job of the sweep asks for, kept beside its array script: a promoted trial's job is
// submitted later, by whichever task or `sweep status` decides it, with the same ones.
nlohmann::json job_to_json(const SlurmJobSpec& s) {
  return {{"partition", s.partition},
          {"account", s.account},
          {"qos", s.qos},
          {"nodes", s.nodes},
          {"gpus_per_node", s.gpus_per_node},
          {"ntasks_per_node", s.ntasks_per_node},
          {"time_limit_s", s.time_limit_s},
          {"job_name", s.job_name},
          {"tokamak", s.tokamak},
          {"db", s.db}};
}

SlurmJobSpec job_from_json(const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
  if (!j.is_object() || !j.contains("partition"))
    throw Error("sweep job file " + path + " is not one `tokamak sweep --slurm` wrote",
                "pass the slurm-job.json of the sweep's folder (data_dir()/sweeps/NAME-ID/)");
  SlurmJobSpec s;
  s.partition = j.value("partition", ""), s.account = j.value("account", ""), s.qos = j.value("qos", "");
  s.nodes = j.value("nodes", 1), s.gpus_per_node = j.value("gpus_per_node", 0);
  s.ntasks_per_node = j.value("ntasks_per_node", 0), s.time_limit_s = j.value("time_limit_s", 0);
  s.job_name = j.value("job_name", ""), s.tokamak = j.value("tokamak", "tokamak"), s.db = j.value("db", "");
  s.sweep_job_file = path;
  return s;
}

void write_slurm_file(const std::string& folder, long job, long task, const std::string& host,
                      const std::string& job_file) {
  nlohmann::json j = {{"job_id", job}, {"host", host}, {"job_file", job_file}};
  if (task >= 0) j["array_task_id"] = task;
  write_file_atomically(folder + "/slurm.json", j.dump() + "\n");
}

// A promoted trial (its row queued again, target slurm): claimed, then submitted as a job of its own that
// resumes its run from the newest checkpoint and stops at its next rung (or trains to the end).
void submit_promoted(RunQueue& queue, const SlurmClient& slurm, const SlurmJobSpec& base, const QueueItem& q,
                     const std::function<void(const std::string&)>& note) {
  const RunFolder f{q.folder};
  bool claimed = false;
  queue.store().transaction([&] {
    if (queue.item(q.id).state != "queued") return;  // another task, or `sweep status`, took it first
    // The last segment's pid and exit file would read as "stopped" while this job waits in the queue: gone
    // before the claim, in its transaction, so that no advancer settles the claimed row from them.
    ::unlink(f.pid_file().c_str());
    ::unlink(f.exit_file().c_str());
    queue.claim(q.id, q.run_uid, q.folder, now_seconds());
    claimed = true;
  });
  if (!claimed) return;
  SlurmJobSpec s = base;
  s.run_uid = q.run_uid, s.run_folder = q.folder, s.halt_step = q.halt_step;
  const std::string script = q.folder + "/job-rung" + std::to_string(q.rung) + ".sh";
  try {  // from the claim on, whatever fails ends the row as failed: a running row with no job would wait forever
    const Config c = config_from_json(q.config_json);
    const std::string own = trial_checkpoint_dir(c.checkpoint.dir, q.folder);
    s.checkpoint_dir = own.empty() ? q.folder : own;
    write_file_atomically(script, slurm_job_script(s));
    const long job = slurm.submit(script);
    write_slurm_file(q.folder, job, -1, slurm.host().key(), base.sweep_job_file);
    note("queue item " + std::to_string(q.id) + " (" + q.name + ") promoted to rung " + std::to_string(q.rung) +
         ": job " + std::to_string(job) +
         (q.halt_step > 0 ? " (to step " + std::to_string(q.halt_step) + ")" : " (to the end)"));
  } catch (const std::exception& e) {
    queue.finish(q.id, "failed", std::string("could not submit its promoted job: ") + e.what(), now_seconds());
    note("queue item " + std::to_string(q.id) + " (" + q.name + ") could not be submitted: " + e.what());
  }
}

// Each trial's config as its job runs it, checked before anything is written or submitted.
std::vector<Config> trial_configs(const SweepPlan& plan, const SlurmJobSpec& s) {
  std::vector<Config> configs;
  for (const SweepTrial& t : plan.trials) {
    Config c = t.config;
    c.dist.gpus = s.nodes * s.tasks_per_node();  // the world size srun gives each trial
    validate_config(c, s.gpus_per_node);
    configs.push_back(c);
  }
  return configs;
}

// Trial i's run folder with its config (c gets the trial's checkpoint folder); returns its task of the array.
SlurmArrayTask create_trial_folder(const SweepPlan& plan, size_t i, Config& c, const std::string& host,
                                   const std::string& sweep_folder) {
  const RunIdentity id = identify_run(c);
  const std::string uid = id.uid, folder = id.folder.path;
  c.checkpoint.dir = trial_checkpoint_dir(c.checkpoint.dir, folder);
  const std::string checkpoints = c.checkpoint.dir.empty() ? folder : c.checkpoint.dir;
  create_run_folder(RunFolder{folder}, {uid, c.name, this_host(), folder, now_seconds()});
  write_file_atomically(folder + "/config.json", config_to_json(c, 2));
  // "Queued" from the start (job 0 until sbatch answers): a trial's folder with no pid, no exit and no
  // slurm.json reads "crashed", and a `sweep status` in that moment would settle it as failed.
  write_slurm_file(folder, 0, static_cast<long>(i), host, sweep_folder + "/slurm-job.json");
  const std::vector<int64_t> rungs = asha_rungs(plan.asha, c.train.steps);
  return {uid, folder, checkpoints, rungs.empty() ? 0 : rungs.front()};
}

}  // namespace

void advance_slurm_sweep(RunStore& store, int64_t sweep_id, const std::string& job_file,
                         const std::function<void(const std::string&)>& note) {
  RunQueue queue(store);
  SweepStore sweeps(store);
  for (const SweepTrialStatus& t : sweeps.status(sweep_id).trials) {
    const QueueItem& q = t.item;
    if (q.target == "local" || q.state != "running" || !path_exists(RunFolder{q.folder}.info_file())) continue;
    std::string what;
    if (settle_ended_run(queue, sweeps, q, &what))
      note("queue item " + std::to_string(q.id) + " (" + q.name + ") " + what);
  }
  sweeps.promotions(sweep_id);  // idempotent: rows it put back are queued until a job is submitted for them
  std::vector<QueueItem> promoted;
  for (const SweepTrialStatus& t : sweeps.status(sweep_id).trials)
    if (t.item.target == "slurm" && t.item.state == "queued" && !t.item.folder.empty()) promoted.push_back(t.item);
  if (promoted.empty()) return;
  if (job_file.empty() || !path_exists(job_file)) {
    note("sweep " + std::to_string(sweep_id) + ": " + std::to_string(promoted.size()) +
         " promoted trials wait, but the sweep's slurm-job.json is missing: they cannot be submitted");
    return;
  }
  const SlurmJobSpec base = job_from_json(job_file);
  const SlurmClient slurm{CommandHost()};
  slurm.require_sbatch();  // before any claim: a machine without Slurm leaves them queued for one that has it
  for (const QueueItem& q : promoted) submit_promoted(queue, slurm, base, q, note);
}

std::string sweep_job_file_of(const SweepStatus& s) {
  for (const SweepTrialStatus& t : s.trials) {
    if (t.item.target != "slurm" || t.item.folder.empty()) continue;
    const std::string path = t.item.folder + "/slurm.json";
    if (!path_exists(path)) continue;
    const nlohmann::json j = nlohmann::json::parse(read_file(path), nullptr, false);
    if (j.is_object() && j.contains("job_file")) return j["job_file"].get<std::string>();
  }
  return "";
}

void submit_sweep_to_slurm(const SweepPlan& plan, SweepSlurmArgs a) {
  SlurmJobSpec& s = a.spec;
  if (s.partition.empty()) throw Error("--slurm needs --partition", "add --partition NAME (`sinfo` lists them)");
  if (a.time.empty()) throw Error("--slurm needs a time limit per trial", "add --time HH:MM:SS");
  if (s.gpus_per_node <= 0 && s.ntasks_per_node <= 0)
    throw Error("how many ranks per trial?", "add --gpus-per-node G (GPU nodes) or --ntasks-per-node N (CPU nodes)");
  s.time_limit_s = parse_slurm_time(a.time);
  std::vector<Config> configs = trial_configs(plan, s);
  const SlurmClient slurm{CommandHost()};
  slurm.require_sbatch();
  slurm.require_partition(s.partition);

  const std::string sweep_uid = new_run_uid();
  const std::string sweep_folder = data_dir() + "/sweeps/" + safe_file_name(plan.name) + "-" + sweep_uid.substr(0, 8);
  make_dirs(sweep_folder);
  std::vector<SlurmArrayTask> tasks;
  std::vector<std::pair<std::string, std::string>> runs;  // uid, folder per trial
  for (size_t i = 0; i < configs.size(); ++i) {
    tasks.push_back(create_trial_folder(plan, i, configs[i], slurm.host().key(), sweep_folder));
    runs.emplace_back(tasks.back().run_uid, tasks.back().run_folder);
  }
  s.job_name = "tokamak-sweep-" + safe_file_name(plan.name);
  std::error_code ec;  // the nodes run this very program unless told otherwise (a shared install, as slurm submit)
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  s.tokamak = !a.tokamak.empty() ? a.tokamak : ec ? std::string("tokamak") : self;
  s.db = a.db;
  s.sweep_job_file = sweep_folder + "/slurm-job.json";
  write_file_atomically(s.sweep_job_file, job_to_json(s).dump(1) + "\n");
  const std::string script_path = sweep_folder + "/job.sh";
  write_file_atomically(script_path, slurm_array_script(s, tasks, sweep_folder));
  const auto remove_folders = [&] {  // nothing left that looks like a crashed run
    for (const auto& r : runs) remove_tree(r.second);
    remove_tree(sweep_folder);
  };
  // Recorded before it is submitted: every task settles its trial through the store (`sweep advance`), so a
  // store that cannot take the sweep must stop it before any job exists.
  std::unique_ptr<RunStore> store;
  int64_t id = 0;
  try {
    store = std::make_unique<RunStore>(a.db);
    if (!store->journal_note().empty()) std::fprintf(stderr, "tokamak: note: %s\n", store->journal_note().c_str());
    id = SweepStore(*store).queue_plan(plan, "slurm", &runs);
  } catch (...) {
    remove_folders();
    throw;
  }
  long job = 0;
  try {
    job = slurm.submit(script_path);
  } catch (const SlurmSubmitUnknown&) {
    throw;  // the array may run: its folders and rows stay for its tasks
  } catch (const std::exception& e) {
    RunQueue queue(*store);
    for (const QueueItem& q : queue.list())
      if (q.sweep_id == id) queue.finish(q.id, "failed", e.what(), now_seconds());
    remove_folders();
    throw;
  }
  for (size_t i = 0; i < runs.size(); ++i)
    write_slurm_file(runs[i].second, job, static_cast<long>(i), slurm.host().key(), s.sweep_job_file);
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
