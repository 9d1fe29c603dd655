// RunQueue (see run_queue.h): the queue's rows in the run store. Every change is one transaction.
#include "engine/fleet/queue/run_queue.h"

#include <cmath>

#include "engine/base/config/renamed_keys.h"
#include "engine/fleet/queue/gpu_slots.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"

namespace tokamak {

// An older store opened read-only (schema 9) has no requeue count: it reads as 0.
static std::string columns(const RunStore& store) {
  return std::string("id, position, state, target, name, config_json, run_uid, folder, error, created, started, "
                     "ended, sweep_id, point, rung, halt_step, resume, ") +
         (store.schema() >= 10 ? "requeues" : "0");
}

static double time_or_zero(const Stmt& s, int col) { return s.is_null(col) ? 0 : s.real(col); }

static QueueItem read_item(const Stmt& s) {
  QueueItem q;
  q.id = s.int64(0), q.position = s.int64(1), q.state = s.text(2), q.target = s.text(3), q.name = s.text(4);
  q.config_json = current_config_text(s.text(5)), q.run_uid = s.text(6), q.folder = s.text(7), q.error = s.text(8);
  q.created = time_or_zero(s, 9), q.started = time_or_zero(s, 10), q.ended = time_or_zero(s, 11);
  q.sweep_id = s.is_null(12) ? 0 : s.int64(12), q.point = s.int64(13), q.rung = s.int64(14);
  q.halt_step = s.int64(15), q.resume = s.text(16);
  q.requeues = s.int64(17);
  return q;
}

RunQueue::RunQueue(RunStore& store) : store_(store) {}

int64_t RunQueue::add(const QueueItem& q) {
  Db& db = store_.db();
  const int64_t last = db.query_int("SELECT coalesce(max(position), 0) FROM queue");
  Stmt s(db,
         "INSERT INTO queue (position, state, target, name, config_json, created, sweep_id, point, rung, "
         "halt_step, resume) VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(1, last + 1).bind(2, q.target).bind(3, q.name).bind(4, q.config_json).bind(5, now_seconds());
  if (q.sweep_id > 0) s.bind(6, q.sweep_id);
  s.bind(7, q.point).bind(8, q.rung).bind(9, q.halt_step).bind(10, q.resume);
  s.run();
  return db.last_insert_id();
}

std::vector<QueueItem> RunQueue::list(bool with_removed) {
  std::vector<QueueItem> items;
  Stmt s(store_.db(),
         ("SELECT " + columns(store_) + " FROM queue" + (with_removed ? "" : " WHERE state != 'removed'") +
          " ORDER BY state != 'queued', CASE WHEN state = 'queued' THEN position ELSE -id END")
             .c_str());
  while (s.step()) items.push_back(read_item(s));
  return items;
}

QueueItem RunQueue::item(int64_t id) {
  Stmt s(store_.db(), ("SELECT " + columns(store_) + " FROM queue WHERE id = ?").c_str());
  s.bind(1, id);
  if (!s.step())
    throw Error("no queue item " + std::to_string(id) + " in " + store_.path(),
                "`tokamak queue list` shows the queue's items and their ids");
  return read_item(s);
}

void RunQueue::remove(int64_t id) {
  store_.transaction([&] {
    const QueueItem q = item(id);
    if (q.state == "running")
      throw Error("queue item " + std::to_string(id) + " is running (run " + q.run_uid + ")",
                  "stop its run first: `tokamak runs control " + q.run_uid + " stop`");
    if (q.state != "queued" && q.state != "stopped")
      throw Error("queue item " + std::to_string(id) + " has ended (" + q.state + "): there is nothing to remove",
                  "its run stays in the run store (`tokamak runs list`)");
    Stmt s(store_.db(), "UPDATE queue SET state = 'removed' WHERE id = ?");
    s.bind(1, id).run();
  });
}

void RunQueue::move(int64_t id, int64_t to) {
  store_.transaction([&] {
    const QueueItem q = item(id);
    if (q.state != "queued")
      throw Error("queue item " + std::to_string(id) + " is " + q.state + ", not queued: only waiting runs move",
                  "`tokamak queue list` shows which are queued");
    std::vector<int64_t> order;
    {
      Stmt s(store_.db(), "SELECT id FROM queue WHERE state = 'queued' AND id != ? ORDER BY position");
      s.bind(1, id);
      while (s.step()) order.push_back(s.int64(0));
    }
    to = std::max<int64_t>(0, std::min<int64_t>(to, static_cast<int64_t>(order.size())));
    order.insert(order.begin() + to, id);
    // Positions renumbered 1..n: the order is exactly the list, whatever gaps removals left.
    Stmt s(store_.db(), "UPDATE queue SET position = ? WHERE id = ?");
    for (size_t i = 0; i < order.size(); ++i) s.bind(1, static_cast<int64_t>(i + 1)).bind(2, order[i]).run();
  });
}

static std::string setting(Db& db, const char* key, const std::string& fallback) {
  Stmt s(db, "SELECT value FROM queue_settings WHERE key = ?");
  s.bind(1, std::string(key));
  return s.step() ? s.text(0) : fallback;
}

static void put_setting(RunStore& store, const char* key, const std::string& value) {
  store.transaction([&] {
    Stmt s(store.db(),
           "INSERT INTO queue_settings (key, value) VALUES (?, ?) "
           "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    s.bind(1, std::string(key)).bind(2, value).run();
  });
}

bool RunQueue::paused() { return setting(store_.db(), "paused", "0") == "1"; }
void RunQueue::set_paused(bool p) { put_setting(store_, "paused", p ? "1" : "0"); }
int64_t RunQueue::parallel() { return std::max<int64_t>(1, std::stoll(setting(store_.db(), "parallel", "1"))); }
void RunQueue::set_parallel(int64_t n) {
  if (n < 1) throw Error("--parallel " + std::to_string(n) + ": at least one run at a time", "write --parallel 1");
  put_setting(store_, "parallel", std::to_string(n));
}

int64_t RunQueue::gpus_per_run() { return std::max<int64_t>(0, std::stoll(setting(store_.db(), "gpus_per_run", "1"))); }
void RunQueue::set_gpus_per_run(int64_t n) {
  if (n < 0)
    throw Error("--gpus-per-run " + std::to_string(n) + ": cannot be negative",
                "write --gpus-per-run 1 (a GPU of its own per run) or 0 (every run sees every GPU)");
  put_setting(store_, "gpus_per_run", std::to_string(n));
}
std::string RunQueue::gpus() { return setting(store_.db(), "gpus", ""); }
void RunQueue::set_gpus(const std::string& list) {
  if (!list.empty()) parse_gpu_list(list);  // refused in one line before anything is kept
  put_setting(store_, "gpus", list);
}

std::optional<QueueItem> RunQueue::next_queued() {
  Stmt s(store_.db(),
         ("SELECT " + columns(store_) + " FROM queue WHERE state = 'queued' ORDER BY position LIMIT 1").c_str());
  if (!s.step()) return std::nullopt;
  return read_item(s);
}

void RunQueue::claim(int64_t id, const std::string& run_uid, const std::string& folder, double now) {
  store_.transaction([&] {
    Stmt s(store_.db(),
           "UPDATE queue SET state = 'running', run_uid = ?, folder = ?, started = ?, error = '' "
           "WHERE id = ? AND state = 'queued'");
    s.bind(1, run_uid).bind(2, folder).bind(3, now).bind(4, id).run();
    if (store_.db().changes() != 1)
      throw Error("queue item " + std::to_string(id) + " is no longer queued", "another worker took it");
  });
}

bool RunQueue::finish(int64_t id, const std::string& state, const std::string& error, double now,
                      const std::string& from) {
  bool changed = false;
  store_.transaction([&] {
    Stmt s(store_.db(), "UPDATE queue SET state = ?, error = ?, ended = ? WHERE id = ? AND state = ?");
    s.bind(1, state).bind(2, error).bind(3, now).bind(4, id).bind(5, from).run();
    changed = store_.db().changes() == 1;
  });
  return changed;
}

std::vector<QueueItem> RunQueue::in_state(const std::string& state) {
  std::vector<QueueItem> items;
  Stmt s(store_.db(), ("SELECT " + columns(store_) + " FROM queue WHERE state = ? ORDER BY position").c_str());
  s.bind(1, state);
  while (s.step()) items.push_back(read_item(s));
  return items;
}

bool RunQueue::requeue(int64_t id, const std::string& resume, const std::string& why) {
  bool changed = false;
  store_.transaction([&] {
    Stmt s(store_.db(),
           "UPDATE queue SET state = 'queued', resume = ?, error = ?, requeues = requeues + 1, "
           "position = (SELECT coalesce(min(position), 1) - 1 FROM queue WHERE state = 'queued') "
           "WHERE id = ? AND state = 'running'");
    s.bind(1, resume).bind(2, why).bind(3, id).run();
    changed = store_.db().changes() == 1;
  });
  return changed;
}

}  // namespace tokamak
