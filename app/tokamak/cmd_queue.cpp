// `tokamak queue list|add|remove|move|pause|resume|work`: this computer's queue of runs, kept in the run store
// (engine/store/run_queue.h) and worked by one detached worker per store (engine/remote/queue_worker.h) that
// `add` and `resume` start when none is running. LibTorch-free: the worker starts each run as
// `tokamak-engine train` in a session of its own.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak/commands.h"
#include "app/tokamak/config_args.h"
#include "engine/remote/queue_worker.h"
#include "engine/remote/run_folder.h"
#include "engine/remote/run_launch.h"
#include "engine/store/run_queue.h"
#include "engine/store/run_store.h"
#include "engine/util/error.h"
#include "engine/util/files.h"

namespace tokamak::cli {
namespace {

struct QueueArgs {
  ConfigArgs config;
  std::string db, name, host;
  int64_t id = 0, to = 0, parallel = 0;
  bool json = false;
};

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
                      {"config", nlohmann::json::parse(q.config_json, nullptr, false)}};
  // A running item's run, as its folder says (paused by `runs control` shows here too).
  if (q.state == "running" && path_exists(RunFolder{q.folder}.info_file()))
    j["run_state"] = read_run_state(RunFolder{q.folder}).state;
  return j;
}

void list(const QueueArgs& a) {
  RunStore store(a.db);
  RunQueue queue(store);
  const std::vector<QueueItem> items = queue.list();
  const long worker = queue_worker_pid(a.db);
  if (a.json) {
    nlohmann::json out = {{"paused", queue.paused()},
                          {"parallel", queue.parallel()},
                          {"worker_pid", worker},
                          {"items", nlohmann::json::array()}};
    int64_t index = 0;
    for (const QueueItem& q : items) out["items"].push_back(item_json(q, q.state == "queued" ? index++ : -1));
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("queue of %s: %s, %lld at a time, %s\n", store.path().c_str(), queue.paused() ? "paused" : "working",
              static_cast<long long>(queue.parallel()),
              worker > 0 ? ("worker pid " + std::to_string(worker)).c_str() : "no worker running");
  if (items.empty()) std::printf("  (empty)\n");
  for (const QueueItem& q : items)
    std::printf("  %4lld  %-8s %s%s%s\n", static_cast<long long>(q.id), q.state.c_str(), q.name.c_str(),
                q.run_uid.empty() ? "" : ("  run " + q.run_uid).c_str(),
                q.error.empty() ? "" : ("  " + q.error).c_str());
}

void add(const QueueArgs& a) {
  if (!a.host.empty())
    throw Error("queue --host: not implemented yet",
                "queue on this computer, or start the run with `tokamak remote train`");
  Config c = a.config.resolve();
  if (!a.name.empty()) c.name = a.name;
  validate_config(c, gpus_here());
  // Fixed now, so the run's folder is known before it starts (the worker creates it).
  if (c.name.empty()) c.name = default_run_name(c);
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
  RunStore store(a.db);
  RunQueue(store).remove(a.id);
  std::fprintf(stderr, "removed queue item %lld\n", static_cast<long long>(a.id));
}

void move(const QueueArgs& a) {
  RunStore store(a.db);
  RunQueue(store).move(a.id, a.to);
  std::fprintf(stderr, "moved queue item %lld to place %lld\n", static_cast<long long>(a.id),
               static_cast<long long>(a.to));
}

void pause(const QueueArgs& a, bool paused) {
  RunStore store(a.db);
  RunQueue(store).set_paused(paused);
  if (!paused) ensure_queue_worker(store.path());
  std::fprintf(stderr, "%s\n", paused ? "queue paused: runs going on go on; nothing new starts" : "queue resumed");
}

void work(const QueueArgs& a) {
  RunStore store(a.db);
  if (a.parallel != 0) RunQueue(store).set_parallel(a.parallel);
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
  CLI::App* queue =
      app.add_subcommand("queue", "This computer's queue of runs: list, add, remove, move, pause, resume");
  queue->require_subcommand(1);
  auto db = [&](CLI::App* c) {
    c->add_option("--db", args->db, "run store that holds the queue (default: $XDG_DATA_HOME/tokamak/runs.db)");
  };
  CLI::App* c = queue->add_subcommand("list", "The queue: waiting runs in order, then the rest, newest first");
  c->add_flag("--json", args->json, "one JSON object: paused, parallel, worker_pid, items (with config)");
  db(c);
  c->callback([args] { list(*args); });

  c = queue->add_subcommand("add", "Queue a run (train options); a worker starts it when its turn comes");
  args->config.add_to(*c);
  c->add_option("--name", args->name, "run name (default: derived from the model and switches)");
  c->add_option("--host", args->host, "queue on an SSH host: not implemented yet");
  c->add_flag("--json", args->json, "one JSON object: id, name");
  db(c);
  c->callback([args] { add(*args); });

  c = queue->add_subcommand("remove", "Take a waiting run out of the queue (a running one: stop its run)");
  c->add_option("id", args->id, "queue item id (`tokamak queue list`)")->required();
  db(c);
  c->callback([args] { remove(*args); });

  c = queue->add_subcommand("move", "Move a waiting run to another place in the queue");
  c->add_option("id", args->id, "queue item id")->required();
  c->add_option("--to", args->to, "its new place among the waiting runs: 0 = next")->required();
  db(c);
  c->callback([args] { move(*args); });

  c = queue->add_subcommand("pause", "Start nothing new (runs already going on go on)");
  db(c);
  c->callback([args] { pause(*args, true); });
  c = queue->add_subcommand("resume", "Start queued runs again (and a worker when none is running)");
  db(c);
  c->callback([args] { pause(*args, false); });

  c = queue->add_subcommand("work", "Work the queue in this process until it is empty (what add/resume start)");
  c->add_option("--parallel", args->parallel, "runs at once, kept for later workers (default: as set, else 1)");
  db(c);
  c->callback([args] { work(*args); });
}

}  // namespace tokamak::cli
