// `tokamak slurm submit|status|cancel`: a run as a Slurm job (docs/REMOTE.md, "Slurm"). `submit` takes the
// train options, checks what can be checked before anything is queued (sbatch is there, the partition
// exists, the time limit sets the checkpoint interval when it is short), creates the run folder with its config and job
// script, and hands the script to sbatch. In the job, srun starts the ranks and rank 0 writes the run folder's
// journal, so `tokamak runs follow UID` and the studio follow a job's run as any other. `status` says what
// the scheduler says (pending and why, running where, ended how); `cancel` is scancel (the ranks get SIGTERM,
// write a checkpoint and end the run stopped). Partition, account and QoS are remembered per host.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "app/cli/commands.h"
#include "app/cli/config_args.h"
#include "app/tokamak/ssh_args.h"
#include "engine/fleet/remote/slurm_client.h"
#include "engine/fleet/remote/slurm_script.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_identity.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {

struct SlurmArgs {
  ConfigArgs config;
  std::string name, db, tokamak, time, job, run_uid;
  std::string host, identity, known_hosts, ssh_config;  // --host: a login node over ssh ("" = this computer)
  SlurmJobSpec spec;
  bool dry_run = false, json = false, wait = false;
};

// $XDG_CONFIG_HOME/tokamak/slurm.json (else ~/.config/tokamak/slurm.json).
std::string defaults_file() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string dir = (xdg && *xdg ? std::string(xdg) : std::string(home ? home : ".") + "/.config") + "/tokamak";
  make_dirs(dir);
  return dir + "/slurm.json";
}

// What was used last on each host ({"local": {"partition": .., "account": .., "qos": ..}}).
nlohmann::json read_defaults() {
  if (!path_exists(defaults_file())) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(read_file(defaults_file()));
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const std::exception&) {
    return nlohmann::json::object();  // a damaged file only loses the remembered values; the next submit rewrites it
  }
}

void fill_defaults(SlurmJobSpec& s, const std::string& host_key) {
  const nlohmann::json all = read_defaults();
  if (!all.contains(host_key) || !all[host_key].is_object()) return;
  const nlohmann::json& d = all[host_key];
  auto take = [&](std::string& field, const char* key) {
    if (field.empty() && d.contains(key) && d[key].is_string()) field = d[key].get<std::string>();
  };
  take(s.partition, "partition"), take(s.account, "account"), take(s.qos, "qos");
}

void remember_defaults(const SlurmJobSpec& s, const std::string& host_key) {
  nlohmann::json all = read_defaults();
  all[host_key] = {{"partition", s.partition}, {"account", s.account}, {"qos", s.qos}};
  write_file_atomically(defaults_file(), all.dump(2) + "\n");
}

// The tokamak command the job runs: given, else this very program (the login node and the compute nodes
// share the install on a cluster; the tests' one-node Slurm runs the build tree's).
std::string tokamak_command(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tokamak") : self.string();
}

CommandHost command_host(const SlurmArgs& a) {
  if (a.host.empty()) return CommandHost();
  return CommandHost(parse_ssh_target(a.host), cli_ssh_options(a.identity, a.known_hosts, a.ssh_config));
}

// "tokamak: why (hint: fix)" as the host's tokamak printed it, without the prefix our own error line adds.
std::string remote_error(const CommandHost& host, const ProcessResult& r, const std::string& tokamak) {
  std::string why = describe_ssh_failure(parse_ssh_target(host.name()), r.code, r.err, tokamak);
  if (why.rfind("tokamak: ", 0) == 0) why.erase(0, 9);
  return why;
}

// `submit --host LOGIN`: the same command runs on the login node (its tokamak writes the run folder and job
// script there and runs sbatch), the resolved config on its stdin. The defaults are remembered here.
void submit_over_ssh(const SlurmArgs& a, const Config& c, const CommandHost& host) {
  const SlurmJobSpec& s = a.spec;
  const std::string tokamak = a.tokamak.empty() ? "tokamak" : a.tokamak;
  std::vector<std::string> cmd = {tokamak,  "slurm",       "submit",    "--config", "/dev/stdin",
                                  "--json", "--partition", s.partition, "--nodes",  std::to_string(s.nodes),
                                  "--time", a.time};
  if (!s.account.empty()) cmd.insert(cmd.end(), {"--account", s.account});
  if (!s.qos.empty()) cmd.insert(cmd.end(), {"--qos", s.qos});
  if (s.gpus_per_node > 0) cmd.insert(cmd.end(), {"--gpus-per-node", std::to_string(s.gpus_per_node)});
  if (s.ntasks_per_node > 0) cmd.insert(cmd.end(), {"--ntasks-per-node", std::to_string(s.ntasks_per_node)});
  if (!a.db.empty()) cmd.insert(cmd.end(), {"--db", a.db});
  if (!a.tokamak.empty()) cmd.insert(cmd.end(), {"--tokamak", a.tokamak});
  if (!a.run_uid.empty()) cmd.insert(cmd.end(), {"--run-uid", a.run_uid});
  if (s.requeue) cmd.push_back("--requeue");
  if (a.dry_run) cmd.push_back("--dry-run");
  const ProcessResult r = host.run(cmd, config_to_json(c, 2), 120);
  if (r.code != 0) throw Error(remote_error(host, r, tokamak));
  const nlohmann::json out = nlohmann::json::parse(r.out, nullptr, false);
  if (out.is_discarded() || !out.is_object())
    throw Error("tokamak on " + host.name() + " printed no result: '" + r.out.substr(0, 200) + "'",
                "is it the same version as this one? (`tokamak remote test --host " + host.name() + "`)");
  if (!a.dry_run) remember_defaults(s, host.key());
  if (a.json) std::printf("%s\n", out.dump().c_str());
  else if (a.dry_run) std::fputs(out.value("script", "").c_str(), stdout);
  else
    std::printf("submitted job %lld on %s: run %s in %s\n", out.value("job_id", 0LL), host.name().c_str(),
                out.value("run_uid", "").c_str(), out.value("folder", "").c_str());
}

// Debug partitions with 15–30 minute limits are common, and a sweep's short trials live there: a limit shorter
// than the checkpoint interval sets the interval instead of being refused. The job has until its signal —
// USR1 warn_s before the limit with --requeue, SIGTERM at the limit otherwise — so the interval becomes half of
// that: a checkpoint midway, and the one every stop writes. Only a checkpoint that could not be written in the
// time Slurm leaves after its signal is warned about (an estimate: model and AdamW state in fp32 at 200 MB/s,
// against Slurm's default KillWait of 30 s). Returns the note to print ("" when nothing changed).
std::string fit_checkpoints_to_limit(Config& c, const SlurmJobSpec& s) {
  const int usable_s = s.time_limit_s - (s.requeue ? s.warn_s : 0);
  if (usable_s <= 0)
    throw Error("time limit " + format_slurm_time(s.time_limit_s) + " leaves no time before the requeue warning (" +
                    std::to_string(s.warn_s) + " s before the limit)",
                "ask for a longer --time, or leave out --requeue");
  const double every_s = c.checkpoint.minutes * 60;
  if (every_s <= 0 || s.time_limit_s >= every_s) return "";
  c.checkpoint.minutes = std::max(1.0, usable_s / 2.0) / 60.0;
  char note[400];
  std::snprintf(note, sizeof note, "checkpoint.minutes=%g (from --time %s%s)", c.checkpoint.minutes,
                format_slurm_time(s.time_limit_s).c_str(), s.requeue ? " and the requeue warning" : "");
  const ModelConfig& m = c.model;
  const double params =
      static_cast<double>(padded_vocab(m) * m.n_embd + m.context * m.n_embd + 12 * m.n_layer * m.n_embd * m.n_embd);
  const double write_s = params * 12 / 200e6;
  std::string out = note;
  if (write_s > 30) {
    char warn[300];
    std::snprintf(warn, sizeof warn,
                  "; warning: its checkpoint (about %.1f GB) may take about %.0f s to write, longer than the 30 s "
                  "Slurm's default KillWait leaves after the signal: the last minutes of each job may be lost",
                  params * 12 / 1e9, write_s);
    out += warn;
  }
  return out;
}

// The job's shape, time limit and uid as given, before anything is asked of Slurm.
void check_job_args(const SlurmArgs& a) {
  const SlurmJobSpec& s = a.spec;
  if (s.nodes < 1) throw Error("--nodes must be 1 or more", "");
  if (s.gpus_per_node > 0 && s.ntasks_per_node > 0)
    throw Error("--gpus-per-node and --ntasks-per-node do not go together",
                "GPU nodes: --gpus-per-node G (one rank per GPU); CPU nodes: --ntasks-per-node N (Gloo ranks)");
  if (s.gpus_per_node <= 0 && s.ntasks_per_node <= 0)
    throw Error("how many ranks per node?", "add --gpus-per-node G (GPU nodes) or --ntasks-per-node N (CPU nodes)");
  if (a.time.empty()) throw Error("no time limit given", "add --time HH:MM:SS");
  if (!a.run_uid.empty() &&
      (a.run_uid.size() != 16 || a.run_uid.find_first_not_of("0123456789abcdef") != std::string::npos))
    throw Error("--run-uid '" + a.run_uid + "' is not a run uid", "16 lowercase hex digits, as a dry run printed it");
}

void submit(SlurmArgs a) {
  Config c = a.config.resolve();
  if (!c.checkpoint.resume.empty())
    throw Error("checkpoint.resume with `tokamak slurm submit`: not implemented yet",
                "a requeued job resumes by itself (--requeue); to continue a finished run, train it again");
  if (!a.name.empty()) c.name = a.name;
  SlurmJobSpec& s = a.spec;
  check_job_args(a);
  s.time_limit_s = parse_slurm_time(a.time);
  const SlurmClient slurm{command_host(a)};
  fill_defaults(s, slurm.host().key());
  if (s.partition.empty())
    throw Error("no partition given and none remembered for " + slurm.host().name(),
                "add --partition NAME (`sinfo` lists them); it is remembered for the next submit");
  c.dist.gpus = s.nodes * s.tasks_per_node();  // the world size the ranks will have (they take srun's)
  validate_config(c, s.gpus_per_node);
  if (const std::string note = fit_checkpoints_to_limit(c, s); !note.empty())
    std::fprintf(stderr, "tokamak slurm: %s\n", note.c_str());
  if (!slurm.host().local()) return submit_over_ssh(a, c, slurm.host());
  if (!a.dry_run) {
    slurm.require_sbatch();
    slurm.require_partition(s.partition);
  }

  const RunIdentity id = identify_run(c, a.run_uid);
  c.name = id.name;  // fixed here, so the ranks name the same folder
  s.run_uid = id.uid, s.run_folder = id.folder.path;
  if (!a.dry_run && path_exists(s.run_folder))  // a uid given twice: never a second job into one run's folder
    throw Error("run " + s.run_uid + " exists already (" + s.run_folder + ")",
                "leave out --run-uid, or dry-run again for a new one");
  s.checkpoint_dir = c.checkpoint.dir.empty() ? s.run_folder : c.checkpoint.dir;
  s.job_name = "tokamak-" + safe_file_name(c.name);
  s.tokamak = tokamak_command(a.tokamak);
  s.db = a.db;
  const std::string script = slurm_job_script(s);
  if (a.dry_run) {
    if (a.json)
      std::printf(
          "%s\n",
          nlohmann::json({{"run_uid", s.run_uid}, {"folder", s.run_folder}, {"script", script}}).dump().c_str());
    else std::fputs(script.c_str(), stdout);
    return;
  }
  const RunFolder folder{s.run_folder};
  create_run_folder(folder, {s.run_uid, c.name, this_host(), folder.path, now_seconds()});
  write_file_atomically(folder.path + "/config.json", config_to_json(c, 2));
  // "Queued" from the start (job 0 until sbatch answers), not "crashed" while sbatch is asked.
  write_file_atomically(folder.path + "/slurm.json",
                        nlohmann::json({{"job_id", 0}, {"host", slurm.host().key()}}).dump() + "\n");
  const std::string script_path = folder.path + "/job.sh";
  write_file_atomically(script_path, script);
  long job = 0;
  try {
    job = slurm.submit(script_path);
  } catch (const SlurmSubmitUnknown&) {
    throw;  // the job may run: its folder stays
  } catch (...) {
    remove_tree(folder.path);  // a job sbatch refused leaves no run folder behind that looks like a crashed run
    throw;
  }
  write_file_atomically(folder.path + "/slurm.json",
                        nlohmann::json({{"job_id", job}, {"host", slurm.host().key()}}).dump() + "\n");
  remember_defaults(s, slurm.host().key());
  if (a.json)
    std::printf("%s\n", nlohmann::json({{"event", "submitted"},
                                        {"job_id", job},
                                        {"run_uid", s.run_uid},
                                        {"name", c.name},
                                        {"folder", folder.path},
                                        {"script", script_path}})
                            .dump()
                            .c_str());
  else
    std::printf("submitted job %ld: run %s (%s) in %s\nwatch it: tokamak slurm status %ld; tokamak runs follow %s\n",
                job, s.run_uid.c_str(), c.name.c_str(), folder.path.c_str(), job, s.run_uid.c_str());
}

// What a front end needs before it offers "Submit to Slurm" (the studio, ui/remote/slurm_info.h): whether
// the host has sbatch (checked there, not assumed), its partitions (as sinfo lists them) and what was used last
// on it. Never fails for a host without Slurm: that is an answer ("sbatch": false, "why": one line).
void info(const SlurmArgs& a) {
  const SlurmClient slurm{command_host(a)};
  nlohmann::json j = {{"host", slurm.host().key()}, {"sbatch", false}, {"partitions", nlohmann::json::array()}};
  try {
    slurm.require_sbatch();
    j["partitions"] = slurm.partitions();
    j["sbatch"] = true;
  } catch (const Error& e) {
    j["why"] = std::string(e.what());
  }
  SlurmJobSpec remembered;
  fill_defaults(remembered, slurm.host().key());
  j["remembered"] = {{"partition", remembered.partition}, {"account", remembered.account}, {"qos", remembered.qos}};
  if (a.json) return (void)std::printf("%s\n", j.dump().c_str());
  if (!j["sbatch"].get<bool>()) return (void)std::printf("%s\n", j["why"].get<std::string>().c_str());
  std::string there;
  for (const auto& p : j["partitions"]) there += (there.empty() ? "" : ", ") + p.get<std::string>();
  std::printf("sbatch on %s; partitions: %s; remembered partition: %s\n", slurm.host().name().c_str(), there.c_str(),
              remembered.partition.empty() ? "none" : remembered.partition.c_str());
}

nlohmann::json job_json(const SlurmJob& j) {
  return {{"job_id", j.id},           {"state", j.state},       {"reason", j.reason},
          {"nodes", j.nodes},         {"run_time", j.run_time}, {"time_limit", j.time_limit},
          {"exit_code", j.exit_code}, {"restarts", j.restarts}, {"summary", describe_slurm_job(j)},
          {"pending", j.pending()},   {"running", j.running()}, {"ended", j.ended()}};
}

void status(const SlurmArgs& a) {
  const SlurmClient slurm{command_host(a)};
  const SlurmJob j = slurm.job(parse_job_id(a.job));
  if (a.json) std::printf("%s\n", job_json(j).dump().c_str());
  else std::printf("job %ld (%s): %s\n", j.id, j.name.c_str(), describe_slurm_job(j).c_str());
}

void cancel(const SlurmArgs& a) {
  const SlurmClient slurm{command_host(a)};
  const long id = parse_job_id(a.job);
  slurm.job(id);  // an unknown job is named before scancel says something vaguer
  slurm.cancel(id);
  std::fprintf(stderr, "cancelled job %ld: its ranks got SIGTERM, write a checkpoint and end the run stopped\n", id);
  if (!a.wait) return;
  for (;;) {  // until the scheduler has ended it (at most KillWait seconds after SIGTERM)
    const SlurmJob j = slurm.job(id);
    if (j.ended()) {
      std::printf("job %ld: %s\n", id, describe_slurm_job(j).c_str());
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

}  // namespace

void add_slurm_command(CLI::App& app) {
  auto args = std::make_shared<SlurmArgs>();
  CLI::App* slurm = app.add_subcommand("slurm", "Train as a Slurm job: submit, status, cancel (docs/REMOTE.md)");
  slurm->require_subcommand(1);

  auto where = [&](CLI::App* c) {
    c->add_option("--host", args->host,
                  "the cluster's login node over ssh (a Host of ~/.ssh/config, or user@host[:port]); default: here");
    c->add_option("--identity", args->identity, "ssh key to log in with (default: ssh's own choice and agent)");
    c->add_option("--known-hosts", args->known_hosts, "known_hosts file (default: ssh's)");
    c->add_option("--ssh-config", args->ssh_config,
                  "ssh config file (default: $TOKAMAK_SSH_CONFIG, else ~/.ssh/config)");
  };
  CLI::App* c = slurm->add_subcommand("submit", "Write the job script of a run (train options) and sbatch it");
  args->config.add_to(*c);
  c->add_option("--name", args->name, "run name (default: derived from the model and switches)");
  c->add_option("--db", args->db, "run store the ranks record in (default: theirs, $XDG_DATA_HOME/tokamak/runs.db)");
  c->add_option("--partition", args->spec.partition, "Slurm partition (remembered for this host)");
  c->add_option("--account", args->spec.account, "Slurm account (remembered for this host)");
  c->add_option("--qos", args->spec.qos, "Slurm QoS (remembered for this host)");
  c->add_option("--nodes", args->spec.nodes, "nodes (default 1)");
  c->add_option("--gpus-per-node", args->spec.gpus_per_node, "GPUs per node: one rank (NCCL) per GPU");
  c->add_option("--ntasks-per-node", args->spec.ntasks_per_node, "CPU nodes: Gloo ranks per node");
  c->add_option("--time", args->time, "time limit, HH:MM:SS (or D-HH:MM:SS)");
  c->add_flag("--requeue", args->spec.requeue,
              "let Slurm requeue the job (preemption, node failure, `scontrol requeue`); it resumes from its "
              "newest checkpoint as the same run. Also asks for its own requeue 2 minutes before the time limit");
  c->add_flag("--dry-run", args->dry_run, "print the job script and submit nothing");
  c->add_flag("--json", args->json, "one JSON object: job_id, run_uid, name, folder, script");
  c->add_option("--tokamak", args->tokamak,
                "the tokamak command on the nodes (default: this program; with --host: tokamak on its PATH)");
  c->add_option("--run-uid", args->run_uid,
                "the run's uid (default: a new one); a dry run's, so that the job is the script that was shown");
  where(c);
  c->callback([args] { submit(*args); });

  c = slurm->add_subcommand("info", "Whether the host has sbatch, its partitions and the remembered defaults");
  c->add_flag("--json", args->json, "one JSON object: sbatch, why, partitions, remembered");
  where(c);
  c->callback([args] { info(*args); });

  c = slurm->add_subcommand("status", "What Slurm says about a job: pending and why, running where, ended how");
  c->add_option("job", args->job, "job id")->required();
  c->add_flag("--json", args->json, "one JSON object");
  where(c);
  c->callback([args] { status(*args); });

  c = slurm->add_subcommand("cancel", "scancel a job: the ranks write a checkpoint and the run ends stopped");
  c->add_option("job", args->job, "job id")->required();
  c->add_flag("--wait", args->wait, "return when the scheduler has ended the job");
  where(c);
  c->callback([args] { cancel(*args); });
}

}  // namespace tokamak::cli
