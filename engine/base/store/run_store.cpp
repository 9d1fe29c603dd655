// The run store's connection, writes and queries. Schema and migrations are in store_schema.cpp.
#include "engine/base/store/run_store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/store/queue_lock.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/store/store_fs.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {

std::string default_db_path() { return data_dir() + "/runs.db"; }

RunStore::RunStore(const std::string& path, Mode mode, StoreOptions options)
    : path_(path.empty() ? default_db_path() : path), options_(options) {
  const auto writable = [](const std::string& p) { return ::access(p.c_str(), W_OK) == 0; };
  const std::string folder = std::filesystem::absolute(path_).parent_path().string();
  const bool read_only = mode == Mode::existing && path_exists(path_) && !(writable(path_) && writable(folder));
  db_ = std::make_unique<Db>(path_, read_only                ? Db::Mode::read_only
                                    : mode == Mode::existing ? Db::Mode::existing
                                                             : Db::Mode::create);
  // A writer holds the lock for milliseconds; 5 s rides out any commit instead of "database is locked".
  db_->exec("PRAGMA busy_timeout = 5000");
  if (!read_only) {
    // A store this build would have to leave as it is is opened read-only, saying why (docs/RELIABILITY.md,
    // "Versions and migrations"): reads work, a write fails with the reason.
    const auto [why, hint] = reason_to_leave_alone(read_store_state(*db_));
    if (!why.empty()) {
      db_ = std::make_unique<Db>(path_, Db::Mode::read_only);
      db_->exec("PRAGMA busy_timeout = 5000");
      db_->set_read_only_reason(why, hint);
      read_only_note_ = why;
    }
  }
  const std::string network = network_file_system_of(folder);
  if (!network.empty())
    journal_note_ = "the run store " + path_ + " is on " + network +
                    ", where SQLite's WAL is not safe across hosts: it keeps a rollback journal there (slower "
                    "writes; keep it on a local disk unless other hosts must write into it)";
  prepare_schema(*db_, !network.empty());
  // In WAL mode NORMAL syncs at checkpoints, not commits: a killed process loses nothing committed, only a
  // power cut can lose the last commits, and the file stays consistent either way. A rollback journal needs
  // FULL for the same.
  db_->exec(network.empty() ? "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON"
                            : "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
  schema_ = static_cast<int>(db_->query_int("PRAGMA user_version"));
  if (!db_->read_only()) mark_crashed();
}

std::pair<std::string, std::string> RunStore::reason_to_leave_alone(const StoreState& st) const {
  if (st.schema > kSchemaVersion)
    return {"it was written by a newer Tokamak (" + (st.written_by.empty() ? "" : st.written_by + ", ") +
                "schema " + std::to_string(st.schema) + "; this is " + TOKAMAK_VERSION + ", schema " +
                std::to_string(kSchemaVersion) + "), whose tables this one reads but does not write",
            "update Tokamak to write into it, or pass another --db"};
  if (st.schema == 0 || st.schema == kSchemaVersion || options_.queue_worker) return {};
  const QueueHolder h = queue_holder(path_);
  if (h.pid == 0 || h.schema >= kSchemaVersion) return {};
  // The store is older than this build and a worker holds its queue: a worker of this build or a newer one
  // would have migrated it when it opened it, so the holder is older and reads the rows as they are.
  const std::string who = h.pid > 0 ? "pid " + std::to_string(h.pid) : "its pid not written yet";
  return {"its queue is being worked by an older Tokamak (" + (h.version.empty() ? "" : h.version + ", ") + who +
              ", schema " + std::to_string(h.schema > 0 ? h.schema : st.schema) + "): the store stays at schema " +
              std::to_string(st.schema) + " until that worker ends, so nothing it reads changes under it",
          "let the queue finish (`tokamak queue list`), or end that worker" +
              (h.pid > 0 ? " (`kill " + std::to_string(h.pid) + "`)" : std::string()) + ", then run this again"};
}

RunStore::~RunStore() = default;

bool RunStore::read_only() const { return db_->read_only(); }

int RunStore::schema_on_disk() { return static_cast<int>(db_->query_int("PRAGMA user_version")); }

void RunStore::transaction(const std::function<void()>& fn) { db_->transaction(fn); }

int RunStore::mark_crashed() {
  const std::string host = this_host();
  const double now = now_seconds();
  const auto find_gone = [&] {
    std::vector<int64_t> gone;
    Stmt s(*db_, "SELECT id, host, pid, heartbeat FROM runs WHERE status = 'running' AND remote = ''");
    while (s.step()) {
      int64_t pid = s.int64(2);
      double beat = s.real(3);
      // Same host: a pid that no longer exists is proof. Elsewhere (or a reused pid) only silence is. Runs
      // recorded from a journal (remote != '') end by their journal: the reader, not silence, decides.
      bool dead = s.text(1) == host && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
      bool silent = !std::isnan(beat) && now - beat > options_.stale_after_s;
      if (dead || silent) gone.push_back(s.int64(0));
    }
    return gone;
  };
  // A look without the write lock first (every open does this); then again under it, so that a run resumed by a
  // new process, or one that beat, since the first look is not stamped crashed.
  if (find_gone().empty()) return 0;
  int n = 0;
  transaction([&] {
    const std::vector<int64_t> gone = find_gone();
    Stmt u(*db_,
           "UPDATE runs SET status = 'crashed', ended = coalesce(heartbeat, updated), updated = ?, "
           "error = 'the process stopped without ending the run (killed, crashed or lost power)' "
           "WHERE id = ? AND status = 'running'");
    for (int64_t id : gone) {
      u.bind(1, now).bind(2, id).run();
      n += db_->changes();
    }
  });
  return n;
}

void RunStore::refuse_live_run(const std::string& uid) {
  Stmt s(*db_, "SELECT id, name, host, pid FROM runs WHERE uid = ? AND status = 'running'");
  s.bind(1, uid);
  if (!s.step()) return;
  const std::string host = s.text(2);
  const int64_t pid = s.int64(3);
  if (host == this_host() && pid == ::getpid()) return;  // this process's own run
  throw Error(
      "run " + std::to_string(s.int64(0)) + " (" + s.text(1) + ") is still being trained by process " +
          std::to_string(pid) + " on " + host,
      "stop that run first (Ctrl-C or kill -TERM " + std::to_string(pid) + "), then resume; or wait until it ends");
}

static std::string make_uid() {
  static int counter = 0;
  std::string seed =
      std::to_string(now_seconds()) + this_host() + std::to_string(::getpid()) + std::to_string(++counter);
  return hex64(fnv1a64(seed.data(), seed.size()));
}

// A run started by an older release (on an SSH host, say) names some config keys as it did: a new row is stored
// under today's names. Older rows stay as they were written, and every reader upgrades them (run_queries.cpp).
int64_t RunStore::begin_run(const RunStart& st, double now, int64_t pid) {
  const std::string uid = st.run_uid.empty() ? make_uid() : st.run_uid;
  const std::string host = st.host.empty() ? this_host() : st.host;
  int64_t id = find_uid(uid);
  const char* fields =
      "config_json = ?1, dataset = ?2, model = ?3, n_params = ?4, device = ?5, gpu_name = ?6, "
      "world_size = ?7, torch_version = ?8, cuda_version = ?9, host = ?10, pid = ?11, "
      "total_steps = ?12, tokens_per_step = ?13, updated = ?14, heartbeat = ?14, tokamak_version = ?17";
  std::string sql = id == 0 ? std::string(
                                  "INSERT INTO runs (uid, name, status, created, config_json, dataset, "
                                  "model, n_params, device, gpu_name, world_size, torch_version, "
                                  "cuda_version, host, pid, total_steps, tokens_per_step, updated, "
                                  "heartbeat, tokamak_version) VALUES (?15, ?16, 'running', ?14, ?1, ?2, ?3, "
                                  "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?14, ?17)")
                            : std::string("UPDATE runs SET ") + fields +
                                  ", status = 'running', ended = NULL, error = '', "
                                  "name = CASE WHEN ?16 = '' THEN name ELSE ?16 END WHERE uid = ?15";
  Stmt s(*db_, sql.c_str());
  s.bind(1, current_config_text(st.config_json))
      .bind(2, st.dataset)
      .bind(3, st.model)
      .bind(4, st.n_params)
      .bind(5, st.device);
  s.bind(6, st.gpu_name).bind(7, static_cast<int64_t>(st.world_size)).bind(8, st.torch_version);
  s.bind(9, st.cuda_version).bind(10, host).bind(11, pid).bind(12, st.total_steps);
  s.bind(13, st.tokens_per_step).bind(14, now).bind(15, uid).bind(16, st.name).bind(17, st.tokamak_version);
  s.run();
  // The two limits the start stated, so that every run's row says what it was held against (profiled or not).
  const SpeedOfLightRecord limits{st.peak_flops, st.memory_bytes_per_s, st.peak_source, st.memory_source, {}};
  if (id == 0) {
    id = db_->last_insert_id();
    set_machine_limits(id, limits);
    return id;
  }
  set_machine_limits(id, limits);
  // A resume restarts from its checkpoint's step: rows logged after it belong to the lost attempt and the
  // resumed run writes them again, so the history stays one line without duplicates.
  forget_after(id, st.start_step);
  return id;
}

void RunStore::forget_after(int64_t run_id, int64_t step) {
  for (const char* table : {"metric_values", "samples"}) {
    Stmt d(*db_, (std::string("DELETE FROM ") + table + " WHERE run_id = ? AND step > ?").c_str());
    d.bind(1, run_id).bind(2, step).run();
  }
  recompute_summary(run_id);
}

double RunStore::wall_offset(int64_t run_id) {
  Stmt s(*db_,
         "SELECT max(value) FROM metric_values WHERE run_id = ? "
         "AND key_id = (SELECT id FROM metric_keys WHERE name = 'wall_s')");
  s.bind(1, run_id);
  return s.step() && !s.is_null(0) ? s.real(0) : 0.0;
}

// Folds a batch of rows into run_summary: one upsert per metric per batch, not one per value.
static void fold_summary(Db& db, int64_t run_id, const std::vector<MetricRow>& rows) {
  struct Fold {
    int64_t n = 0, last_step = 0;
    double last = 0, min = 0, max = 0;
  };
  std::vector<std::pair<std::string, Fold>> fold;  // a dozen keys: a linear search beats a map
  for (const MetricRow& r : rows) {
    for (const MetricValue& mv : r.values) {
      const double v = mv.value;
      if (std::isnan(v)) continue;
      auto it = std::find_if(fold.begin(), fold.end(), [&](const auto& f) { return f.first == mv.key; });
      if (it == fold.end()) it = fold.insert(fold.end(), {mv.key, Fold{}});
      Fold& f = it->second;
      if (f.n == 0 || r.step >= f.last_step) f.last_step = r.step, f.last = v;
      f.min = f.n == 0 ? v : std::min(f.min, v);
      f.max = f.n == 0 ? v : std::max(f.max, v);
      ++f.n;
    }
  }
  Stmt sum(db,
           "INSERT INTO run_summary (run_id, metric, n, last_step, last, min, max) VALUES (?,?,?,?,?,?,?) "
           "ON CONFLICT (run_id, metric) DO UPDATE SET n = n + excluded.n, "
           "last = CASE WHEN excluded.last_step >= last_step THEN excluded.last ELSE last END, "
           "last_step = max(last_step, excluded.last_step), "
           "min = min(min, excluded.min), max = max(max, excluded.max)");
  for (const auto& [key, f] : fold) {
    sum.bind(1, run_id).bind(2, key).bind(3, f.n).bind(4, f.last_step);
    sum.bind(5, f.last).bind(6, f.min).bind(7, f.max).run();
  }
}

// The id of a metric key, added on first use. Not cached across calls: a rolled-back transaction would
// leave a cached id pointing nowhere.
static int64_t key_id(Db& db, const MetricValue& v) {
  Stmt find(db, "SELECT id FROM metric_keys WHERE name = ?");
  find.bind(1, v.key);
  if (find.step()) return find.int64(0);
  Stmt add(db, "INSERT INTO metric_keys (name, integer) VALUES (?, ?)");
  add.bind(1, v.key).bind(2, int64_t{v.integer}).run();
  return db.last_insert_id();
}

void RunStore::add_metrics(int64_t run_id, const std::vector<MetricRow>& rows) {
  if (rows.empty()) return;
  std::vector<std::pair<std::string, int64_t>> ids;
  Stmt ins(*db_,
           "INSERT INTO metric_values (run_id, step, key_id, value) VALUES (?, ?, ?, ?) "
           "ON CONFLICT (run_id, step, key_id) DO UPDATE SET value = excluded.value");
  for (const MetricRow& r : rows) {
    for (const MetricValue& v : r.values) {
      if (std::isnan(v.value)) continue;
      auto it = std::find_if(ids.begin(), ids.end(), [&](const auto& k) { return k.first == v.key; });
      if (it == ids.end()) it = ids.insert(ids.end(), {v.key, key_id(*db_, v)});
      ins.bind(1, run_id).bind(2, r.step).bind(3, it->second).bind(4, v.value).run();
    }
  }
  fold_summary(*db_, run_id, rows);
}

void RunStore::recompute_summary(int64_t run_id) {
  Stmt d(*db_, "DELETE FROM run_summary WHERE run_id = ?");
  d.bind(1, run_id).run();
  fold_summary(*db_, run_id, metrics(run_id));
}

void RunStore::add_sample(int64_t run_id, const SampleRow& r) {
  Stmt s(*db_, "INSERT INTO samples (run_id, step, prompt, text, created) VALUES (?, ?, ?, ?, ?)");
  s.bind(1, run_id).bind(2, r.step).bind(3, r.prompt).bind(4, r.text).bind(5, r.created).run();
}

void RunStore::add_checkpoint(int64_t run_id, const CheckpointRow& r) {
  Stmt s(*db_, "INSERT INTO checkpoints (run_id, step, path, created) VALUES (?, ?, ?, ?)");
  s.bind(1, run_id).bind(2, r.step).bind(3, r.path).bind(4, r.created).run();
}

int64_t RunStore::add_play(int64_t run_id, const PlayRow& r) {
  Stmt s(*db_, "INSERT INTO playground (run_id, step, prompt, text, options, created) VALUES (?, ?, ?, ?, ?, ?)");
  s.bind(1, run_id).bind(2, r.step).bind(3, r.prompt).bind(4, r.text).bind(5, r.options_json).bind(6, r.created).run();
  return db_->last_insert_id();
}

void RunStore::heartbeat(int64_t run_id, double now) {
  // A beat from a live writer also takes back a `crashed` that a reader stamped while this process was
  // frozen (suspended laptop, SIGSTOP): the run is evidently alive.
  Stmt s(*db_,
         "UPDATE runs SET heartbeat = ?1, updated = ?1, status = 'running', ended = NULL, "
         "error = CASE WHEN status = 'crashed' THEN '' ELSE error END "
         "WHERE id = ?2 AND status IN ('running', 'crashed')");
  s.bind(1, now).bind(2, run_id).run();
}

void RunStore::end_run(int64_t run_id, const std::string& status, const std::string& error, double now) {
  Stmt s(*db_, "UPDATE runs SET status = ?, error = ?, ended = ?3, updated = ?3, heartbeat = ?3 WHERE id = ?4");
  s.bind(1, status).bind(2, error).bind(3, now).bind(4, run_id).run();
}

void RunStore::set_tags(int64_t run_id, const std::string& tags_json, const std::string& notes) {
  Stmt s(*db_, "UPDATE runs SET tags = ?, notes = ? WHERE id = ?");
  s.bind(1, tags_json).bind(2, notes).bind(3, run_id).run();
}

void RunStore::delete_run(int64_t run_id) {
  for (const char* table :
       {"metric_values", "run_summary", "samples", "checkpoints", "kind_floors", "machine_limits"}) {
    Stmt d(*db_, (std::string("DELETE FROM ") + table + " WHERE run_id = ?").c_str());
    d.bind(1, run_id).run();
  }
  Stmt d(*db_, "DELETE FROM runs WHERE id = ?");
  d.bind(1, run_id).run();
}

}  // namespace tokamak
