// `tokamak queue list|add|remove|move|pause|resume|work`: this computer's queue of runs, kept in the run store
// (engine/fleet/queue/run_queue.h) and worked by one detached worker per store (engine/fleet/queue/queue_worker.h) that
// `add` and `resume` start when none is running. LibTorch-free: the worker starts each run as
// `tokamak-engine train` in a session of its own. With --host the same command runs on an SSH host against
// its own store and worker (host_command.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/commands.h"
#include "app/cli/config_args.h"
#include "app/tokamak/host_command.h"
#include "engine/fleet/queue/gpu_slots.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/machine/precision_here.h"
#include "engine/base/run/journal.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/util/format.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {
namespace {

struct QueueArgs {
  ConfigArgs config;
  HostArgs host;
  std::string db, name, gpus;
  int64_t id = 0, to = 0, parallel = 0, gpus_per_run = 0;
  bool json = false, gpus_per_run_given = false, gpus_given = false;
};

// The words after `tokamak` that do the same on the host: SUBCOMMAND, then WORDS, --json and --db as given.
std::vector<std::string> host_words(const QueueArgs& a, const std::string& subcommand,
                                    std::vector<std::string> words = {}, bool json = false) {
  words.insert(words.begin(), {"queue", subcommand});
  if (json && a.json) words.push_back("--json");
  if (!a.db.empty()) words.insert(words.end(), {"--db", a.db});
  return words;
}

nlohmann::json item_json(const QueueItem& q, int64_t index) {
  nlohmann::json j = {{"id", q.id},
                      {"index", index},
                      {"state", q.state},
                      {"target", q.target},
                      {"name", q.name},
                      {"run_uid", q.run_uid},
                      {"folder", q.folder},
                      {"error", q.error},
                      {"created", q.created},
                      {"started", q.started},
                      {"ended", q.ended},
                      {"sweep_id", q.sweep_id},
                      {"point", q.point},
                      {"rung", q.rung},
                      {"halt_step", q.halt_step},
                      {"resume", q.resume},
                      {"requeues", q.requeues},
                      {"config", nlohmann::json::parse(q.config_json, nullptr, false)}};
  // A running item's run, as its folder says (paused by `runs control` shows here too).
  if (q.state == "running" && path_exists(RunFolder{q.folder}.info_file())) {
    j["run_state"] = read_run_state(RunFolder{q.folder}).state;
    // Where it is and its own estimate of the time left (eta_s, evaluations included) at its last report.
    const nlohmann::json last =
        nlohmann::json::parse(last_event_line(RunFolder{q.folder}.journal(), "step"), nullptr, false);
    if (last.is_object()) {
      j["step"] = last.value("step", int64_t{0});
      if (last.contains("eta_s")) j["eta_s"] = last["eta_s"];
    }
  }
  // The GPUs of its own the worker gave it (CUDA_VISIBLE_DEVICES), when it got some.
  if (!q.folder.empty())
    if (const std::string gpus = recorded_gpus(RunFolder{q.folder}.gpus_file()); !gpus.empty()) j["gpus"] = gpus;
  return j;
}

void list(const QueueArgs& a) {
  if (a.host.given()) return run_on_host(a.host, host_words(a, "list", {}, true));
  RunStore store(a.db);
  if (!store.read_only_note().empty())
    std::fprintf(stderr, "tokamak: note: %s is opened read-only: %s\n", store.path().c_str(),
                 store.read_only_note().c_str());
  RunQueue queue(store);
  const std::vector<QueueItem> items = queue.list();
  const long worker = queue_worker_pid(a.db);
  if (a.json) {
    nlohmann::json out = {{"paused", queue.paused()}, {"parallel", queue.parallel()},
                          {"worker_pid", worker},     {"gpus_per_run", queue.gpus_per_run()},
                          {"gpus", queue.gpus()},     {"items", nlohmann::json::array()}};
    int64_t index = 0;
    for (const QueueItem& q : items) out["items"].push_back(item_json(q, q.state == "queued" ? index++ : -1));
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("queue of %s: %s, %lld at a time, %s\n", store.path().c_str(), queue.paused() ? "paused" : "working",
              static_cast<long long>(queue.parallel()),
              worker > 0 ? ("worker pid " + std::to_string(worker)).c_str() : "no worker running");
  if (items.empty()) std::printf("  (empty)\n");
  for (const QueueItem& q : items) {
    std::string at;
    if (q.state == "running") {
      const nlohmann::json j = item_json(q, -1);
      if (j.contains("step")) at = "  step " + std::to_string(j["step"].get<int64_t>());
      if (j.contains("eta_s")) at += ", " + format_duration(j["eta_s"].get<double>()) + " left";
    }
    std::printf("  %4lld  %-8s %s%s%s%s\n", static_cast<long long>(q.id), q.state.c_str(), q.name.c_str(),
                q.run_uid.empty() ? "" : ("  run " + q.run_uid).c_str(), at.c_str(),
                q.error.empty() ? "" : ("  " + q.error).c_str());
  }
}

// `add --host`: the config file travels on ssh's stdin; the host resolves and validates it (its GPUs, its paths).
void add_on_host(const QueueArgs& a) {
  std::vector<std::string> words;
  if (!a.config.file.empty()) words.insert(words.end(), {"--config", "/dev/stdin"});
  if (!a.config.preset.empty()) words.insert(words.end(), {"--preset", a.config.preset});
  for (const std::string& set : a.config.sets) words.insert(words.end(), {"--set", set});
  if (!a.name.empty()) words.insert(words.end(), {"--name", a.name});
  run_on_host(a.host, host_words(a, "add", words, true), a.config.file.empty() ? "" : read_file(a.config.file));
}

void add(const QueueArgs& a) {
  if (a.host.given()) return add_on_host(a);
  Config c = a.config.resolve();
  if (!a.name.empty()) c.name = a.name;
  validate_config(c, gpus_here());
  // Fixed now, so the run's folder is known before it starts (the worker creates it): named for what it will train
  // here, `auto` resolved as a run on this machine resolves it (precision_here), as `tokamak train` names its runs.
  // The queued config keeps `auto`: the run resolves it again when it starts.
  if (c.name.empty()) {
    Config named = c;
    named.speed.precision = precision_here(c.speed.precision, c.device);
    named.speed.layers = resolved_layers(named, named.speed.precision);
    c.name = default_run_name(named);
  }
  RunStore store(a.db);
  RunQueue queue(store);
  QueueItem q;
  q.name = c.name, q.config_json = config_to_json(c, -1);
  int64_t id = 0;
  store.transaction([&] { id = queue.add(q); });
  ensure_queue_worker(store.path());
  if (a.json) std::printf("%s\n", nlohmann::json({{"id", id}, {"name", c.name}}).dump().c_str());
  else std::printf("queued item %lld: %s\n", static_cast<long long>(id), c.name.c_str());
}

void remove(const QueueArgs& a) {
  if (a.host.given()) return run_on_host(a.host, host_words(a, "remove", {std::to_string(a.id)}));
  RunStore store(a.db);
  RunQueue(store).remove(a.id);
  std::fprintf(stderr, "removed queue item %lld\n", static_cast<long long>(a.id));
}

void move(const QueueArgs& a) {
  if (a.host.given())
    return run_on_host(a.host, host_words(a, "move", {std::to_string(a.id), "--to", std::to_string(a.to)}));
  RunStore store(a.db);
  RunQueue(store).move(a.id, a.to);
  std::fprintf(stderr, "moved queue item %lld to place %lld\n", static_cast<long long>(a.id),
               static_cast<long long>(a.to));
}

void pause(const QueueArgs& a, bool paused) {
  if (a.host.given()) return run_on_host(a.host, host_words(a, paused ? "pause" : "resume"));
  RunStore store(a.db);
  RunQueue(store).set_paused(paused);
  if (!paused) ensure_queue_worker(store.path());
  std::fprintf(stderr, "%s\n", paused ? "queue paused: runs going on go on; nothing new starts" : "queue resumed");
}

void work(const QueueArgs& a) {
  RunStore store(a.db);
  if (a.parallel != 0) RunQueue(store).set_parallel(a.parallel);
  if (a.gpus_per_run_given) RunQueue(store).set_gpus_per_run(a.gpus_per_run);
  if (a.gpus_given) RunQueue(store).set_gpus(a.gpus == "all" ? "" : a.gpus);
  QueueWorkerOptions o;
  o.db = store.path();
  o.note = [](const std::string& s) {
    std::printf("%s\n", s.c_str());
    std::fflush(stdout);
  };
  if (!work_queue(o))
    std::fprintf(stderr, "a queue worker is already working %s (pid %ld)\n", store.path().c_str(),
                 queue_worker_pid(a.db));
}

}  // namespace

void add_queue_command(CLI::App& app) {
  auto args = std::make_shared<QueueArgs>();
  CLI::App* queue = app.add_subcommand(
      "queue", "The queue of runs of this computer (or of an SSH host): list, add, remove, move, pause, resume");
  queue->require_subcommand(1);
  auto db = [&](CLI::App* c) {
    c->add_option("--db", args->db, "run store that holds the queue (default: $XDG_DATA_HOME/tokamak/runs.db)");
  };
  auto where = [&](CLI::App* c) { add_host_options(c, args->host); };
  CLI::App* c = queue->add_subcommand("list", "The queue: waiting runs in order, then the rest, newest first");
  c->add_flag("--json", args->json,
              "one JSON object: paused, parallel, gpus_per_run, gpus, worker_pid, items (with config)");
  db(c);
  where(c);
  c->callback([args] { list(*args); });

  c = queue->add_subcommand("add", "Queue a run (train options); a worker starts it when its turn comes");
  args->config.add_to(*c);
  c->add_option("--name", args->name, "run name (default: derived from the model and switches)");
  c->add_flag("--json", args->json, "one JSON object: id, name");
  db(c);
  where(c);
  c->callback([args] { add(*args); });

  c = queue->add_subcommand("remove", "Take a waiting run out of the queue (a running one: stop its run)");
  c->add_option("id", args->id, "queue item id (`tokamak queue list`)")->required();
  db(c);
  where(c);
  c->callback([args] { remove(*args); });

  c = queue->add_subcommand("move", "Move a waiting run to another place in the queue");
  c->add_option("id", args->id, "queue item id")->required();
  c->add_option("--to", args->to, "its new place among the waiting runs: 0 = next")->required();
  db(c);
  where(c);
  c->callback([args] { move(*args); });

  c = queue->add_subcommand("pause", "Start nothing new (runs already going on go on)");
  db(c);
  where(c);
  c->callback([args] { pause(*args, true); });
  c = queue->add_subcommand("resume", "Start queued runs again (and a worker when none is running)");
  db(c);
  where(c);
  c->callback([args] { pause(*args, false); });

  c = queue->add_subcommand("work", "Work the queue in this process until it is empty (what add/resume start)");
  c->add_option("--parallel", args->parallel, "runs at once, kept for later workers (default: as set, else 1)");
  CLI::Option* per_run =
      c->add_option("--gpus-per-run", args->gpus_per_run,
                    "GPUs of its own (CUDA_VISIBLE_DEVICES) for each run on device cuda, kept for later workers "
                    "(default: as set, else 1; 0 = every run sees every GPU)");
  CLI::Option* gpus =
      c->add_option("--gpus", args->gpus,
                    "the GPUs the queue hands out, e.g. 0,1,3, kept for later workers ('all' = every GPU of this "
                    "machine, the default)");
  db(c);
  c->callback([args, per_run, gpus] {
    args->gpus_per_run_given = per_run->count() > 0, args->gpus_given = gpus->count() > 0;
    work(*args);
  });
}

}  // namespace tokamak::cli
