// `tokamak sweep FILE [--dry-run] [--json] [--slurm ...]` and `tokamak sweep status [ID]`: a sweep file
// (docs/SWEEPS.md) expanded and validated (engine/fleet/queue/sweep.h), then queued on this computer as one trial
// per point (engine/fleet/queue/sweep_store.h) — the queue worker runs them and, with early stopping, stops and
// promotes them at their rungs — or submitted as one Slurm job array (cmd_sweep_slurm.cpp). Nothing is queued
// unless every trial is valid. With --host the same command runs on an SSH host (host_command.h), the sweep
// file on its stdin: the host's own queue and worker train the trials there.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_sweep.h"
#include "app/cli/commands.h"
#include "app/tokamak/host_command.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep.h"
#include "engine/fleet/queue/sweep_importance.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {

struct SweepArgs {
  HostArgs host;
  std::string file, db;
  std::string job_file, run_uid;  // sweep advance
  int64_t id = 0;
  bool dry_run = false, json = false, slurm = false;
  SweepSlurmArgs on_slurm;
};

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json plan_json(const SweepPlan& p) {
  nlohmann::json trials = nlohmann::json::array();
  for (const SweepTrial& t : p.trials)
    trials.push_back({{"point", t.point},
                      {"name", t.name},
                      {"summary", t.summary},
                      {"config", nlohmann::json::parse(config_to_json(t.config, -1))}});
  const int64_t steps = p.trials.empty() ? 0 : p.trials.front().config.train.steps;
  return {{"name", p.name},
          {"method", p.method},
          {"keys", p.keys},
          {"metric", p.metric.name},
          {"direction", p.metric.maximize ? "max" : "min"},
          {"asha", {{"min_steps", p.asha.min_steps}, {"eta", p.asha.eta}, {"rungs", asha_rungs(p.asha, steps)}}},
          {"trials", trials}};
}

// `sweep FILE --host H`: the file read here travels on stdin; the host plans, checks and queues it (its GPUs,
// its data paths), or submits it to its Slurm with --slurm (the host as a cluster's login node).
void sweep_on_host(const SweepArgs& a) {
  std::vector<std::string> words = {"sweep", "/dev/stdin"};
  if (a.dry_run) words.push_back("--dry-run");
  if (a.json) words.push_back("--json");
  if (!a.db.empty()) words.insert(words.end(), {"--db", a.db});
  if (a.slurm) {
    const SweepSlurmArgs& sl = a.on_slurm;
    words.push_back("--slurm");
    auto opt = [&](const char* name, const std::string& v) {
      if (!v.empty()) words.insert(words.end(), {name, v});
    };
    auto num = [&](const char* name, int64_t v) {
      if (v > 0) words.insert(words.end(), {name, std::to_string(v)});
    };
    opt("--partition", sl.spec.partition), opt("--account", sl.spec.account), opt("--qos", sl.spec.qos);
    opt("--time", sl.time), opt("--tokamak", sl.tokamak);
    num("--nodes", sl.spec.nodes), num("--gpus-per-node", sl.spec.gpus_per_node);
    num("--ntasks-per-node", sl.spec.ntasks_per_node);
  }
  HostArgs host = a.host;
  host.tokamak = a.on_slurm.tokamak;  // the sweep's --tokamak: the command there (and on its Slurm nodes)
  run_on_host(host, words, read_file(a.file), a.file);
}

void sweep(const SweepArgs& a) {
  if (a.file.empty()) throw Error("no sweep file given", "write `tokamak sweep FILE.json` (docs/SWEEPS.md)");
  if (a.host.given()) return sweep_on_host(a);
  const SweepPlan plan = plan_sweep(read_file(a.file), a.file, gpus_here());
  const std::vector<int64_t> rungs =
      asha_rungs(plan.asha, plan.trials.empty() ? 0 : plan.trials.front().config.train.steps);
  if (a.dry_run) {
    if (a.json) return (void)std::printf("%s\n", plan_json(plan).dump().c_str());
    std::printf("sweep %s: %zu trials (%s), metric %s (%s)", plan.name.c_str(), plan.trials.size(), plan.method.c_str(),
                plan.metric.name.c_str(), plan.metric.maximize ? "max" : "min");
    if (!rungs.empty()) {
      std::printf(", ASHA η=%lld rungs at step", static_cast<long long>(plan.asha.eta));
      for (int64_t r : rungs) std::printf(" %lld", static_cast<long long>(r));
    }
    std::printf("\n");
    for (const SweepTrial& t : plan.trials) std::printf("  %s\n", t.name.c_str());
    return;
  }
  if (a.slurm) {
    SweepSlurmArgs on = a.on_slurm;
    on.db = a.db, on.json = a.json;
    return submit_sweep_to_slurm(plan, on);
  }
  RunStore store(a.db);
  const int64_t id = SweepStore(store).queue_plan(plan, "local");
  ensure_queue_worker(store.path());
  if (a.json)
    std::printf("%s\n",
                nlohmann::json({{"sweep_id", id}, {"name", plan.name}, {"trials", plan.trials.size()}}).dump().c_str());
  else
    std::printf("sweep %lld (%s): %zu trials queued\nwatch it: tokamak sweep status %lld\n", static_cast<long long>(id),
                plan.name.c_str(), plan.trials.size(), static_cast<long long>(id));
}

// Which swept key matters most (engine/fleet/queue/sweep_importance.h), strongest first.
nlohmann::json importance_json(const SweepStatus& s) {
  nlohmann::json out = nlohmann::json::array();
  for (const KeyImportance& k : sweep_importance(s))
    out.push_back({{"key", k.key}, {"measure", k.measure}, {"rho", number_or_null(k.rho)}, {"n", k.n}});
  return out;
}

nlohmann::json status_json(const SweepStatus& s) {
  nlohmann::json trials = nlohmann::json::array();
  for (const SweepTrialStatus& t : s.trials) {
    nlohmann::json rungs = nlohmann::json::array();
    for (const RungRow& r : t.rungs)
      rungs.push_back({{"rung", r.rung},
                       {"step", r.step},
                       {"metric", number_or_null(r.metric)},
                       {"val_loss", number_or_null(r.val_loss)},
                       {"promoted", r.promoted}});
    trials.push_back({{"queue_id", t.item.id},
                      {"point", t.item.point},
                      {"name", t.item.name},
                      {"state", t.item.state},
                      {"run_uid", t.item.run_uid},
                      {"folder", t.item.folder},
                      {"target", t.item.target},
                      {"error", t.item.error},
                      {"config", nlohmann::json::parse(t.item.config_json, nullptr, false)},
                      {"rungs", rungs}});
  }
  return {{"sweep_id", s.id},
          {"name", s.name},
          {"importance", importance_json(s)},
          {"spec", nlohmann::json::parse(s.spec_json, nullptr, false)},
          {"metric", s.metric},
          {"direction", s.maximize ? "max" : "min"},
          {"asha", {{"min_steps", s.asha.min_steps}, {"eta", s.asha.eta}}},
          {"created", s.created},
          {"trials", trials}};
}

// A scheduler's trials (a Slurm job array) have no worker here: when shown, the trials whose jobs ended are
// settled from their run folders and ASHA's promotions submitted, as the tasks themselves do when they end
// (a job killed at its time limit never gets to), so a sweep whose last task died still moves on.
void settle_scheduled(RunStore& store, const SweepStatus& s, bool json) {
  bool scheduled = false;
  for (const SweepTrialStatus& t : s.trials) scheduled = scheduled || t.item.target != "local";
  if (!scheduled) return;
  advance_slurm_sweep(store, s.id, sweep_job_file_of(s), [json](const std::string& line) {
    if (!json) std::fprintf(stderr, "%s\n", line.c_str());
  });
}

// `sweep advance --job FILE --run UID`: what a Slurm sweep's task runs on its batch host after training.
void advance(const SweepArgs& a) {
  RunStore store(a.db);
  for (const QueueItem& q : RunQueue(store).list())
    if (q.run_uid == a.run_uid && q.sweep_id > 0)
      return advance_slurm_sweep(store, q.sweep_id, a.job_file, [](const std::string& line) {
        std::printf("%s\n", line.c_str()), std::fflush(stdout);
      });
  throw Error("run " + a.run_uid + " is no sweep trial in " + store.path(),
              "pass the --run and --db the sweep's job script passes (`tokamak sweep status` lists the trials)");
}

void status(const SweepArgs& a) {
  if (a.host.given()) {
    std::vector<std::string> words = {"sweep", "status"};
    if (a.id > 0) words.push_back(std::to_string(a.id));
    if (a.json) words.push_back("--json");
    if (!a.db.empty()) words.insert(words.end(), {"--db", a.db});
    return run_on_host(a.host, words);
  }
  RunStore store(a.db);
  SweepStore sweeps(store);
  std::vector<int64_t> ids = a.id > 0 ? std::vector<int64_t>{a.id} : sweeps.sweep_ids();
  for (int64_t id : ids) {
    settle_scheduled(store, sweeps.status(id), a.json);
    const SweepStatus s = sweeps.status(id);
    if (a.json) {
      std::printf("%s\n", status_json(s).dump().c_str());
      continue;
    }
    std::printf("sweep %lld (%s): metric %s\n", static_cast<long long>(s.id), s.name.c_str(), s.metric.c_str());
    for (const SweepTrialStatus& t : s.trials) {
      std::string rungs;
      for (const RungRow& r : t.rungs) {
        char buf[64];
        std::snprintf(buf, sizeof buf, " @%lld %.4g%s", static_cast<long long>(r.step), r.metric,
                      r.promoted ? "↑" : "");
        rungs += buf;
      }
      std::printf("  %-8s %s%s\n", t.item.state.c_str(), t.item.name.c_str(), rungs.c_str());
    }
  }
  if (ids.empty() && !a.json) std::printf("no sweeps in %s\n", store.path().c_str());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* c = app.add_subcommand("sweep", "Queue a sweep file's trials (docs/SWEEPS.md); `sweep status` shows them");
  c->add_option("file", args->file, "sweep file (resources/sweeps/*.json)");
  c->add_flag("--dry-run", args->dry_run, "validate every trial and print them; queue nothing");
  c->add_flag("--json", args->json, "one JSON object (the plan with --dry-run)");
  c->add_option("--db", args->db, "run store whose queue takes the trials (default: $XDG_DATA_HOME/tokamak/runs.db)");
  c->add_flag("--slurm", args->slurm,
              "submit the trials as one Slurm job array on this computer's Slurm (promoted trials: a job each)");
  SweepSlurmArgs& sl = args->on_slurm;
  c->add_option("--partition", sl.spec.partition, "--slurm: the partition");
  c->add_option("--account", sl.spec.account, "--slurm: the account");
  c->add_option("--qos", sl.spec.qos, "--slurm: the QoS");
  c->add_option("--nodes", sl.spec.nodes, "--slurm: nodes per trial (default 1)");
  c->add_option("--gpus-per-node", sl.spec.gpus_per_node, "--slurm: GPUs per node, one rank each");
  c->add_option("--ntasks-per-node", sl.spec.ntasks_per_node, "--slurm: CPU nodes: Gloo ranks per node");
  c->add_option("--time", sl.time, "--slurm: each trial's time limit, HH:MM:SS");
  c->add_option("--tokamak", sl.tokamak,
                "--slurm: the tokamak command on the nodes (default: this program); with --host: the tokamak "
                "command there (and on its nodes)");
  add_host_options(c, args->host, false);
  CLI::App* s = c->add_subcommand("status", "Each trial of a sweep (all sweeps without ID): state, metric per rung");
  s->add_option("id", args->id, "sweep id");
  s->add_flag("--json", args->json, "one JSON object per sweep");
  s->add_option("--db", args->db, "run store");
  add_host_options(s, args->host);
  s->callback([args] { status(*args); });
  CLI::App* adv = c->add_subcommand(
      "advance", "What a Slurm sweep's task runs when its training ends: settle, promote, submit the promoted");
  adv->add_option("--job", args->job_file, "the sweep folder's slurm-job.json")->required();
  adv->add_option("--run", args->run_uid, "the trial's run uid")->required();
  adv->add_option("--db", args->db, "run store");
  adv->callback([args] { advance(*args); });
  // `sweep status` and `sweep advance` run their own callbacks; the parent's would also run: keep it to the file.
  c->callback([args, s, adv] {
    if (s->parsed() || adv->parsed()) return;
    sweep(*args);
  });
}

}  // namespace tokamak::cli
