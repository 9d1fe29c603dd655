// The run store's reads, and the import-side insert that mirrors them field for field.
#include <algorithm>
#include <cctype>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"

namespace tokamak {

// Everything but config_json, which listings do not need and which can be kilobytes per run. A store of schema
// 6 or 7, read as it is (read-only), has no tokamak_version: it reads as "".
static std::string run_columns(int schema) {
  return std::string(
             "id, uid, name, status, created, updated, heartbeat, ended, dataset, model, n_params, device, gpu_name, "
             "world_size, torch_version, cuda_version, host, pid, total_steps, tokens_per_step, error, tags, notes, ") +
         (schema >= 8 ? "tokamak_version" : "''");
}
static constexpr int kNumRunColumns = 24;

static RunInfo read_run(const Stmt& s) {
  RunInfo r;
  r.id = s.int64(0);
  r.uid = s.text(1);
  r.name = s.text(2);
  r.status = s.text(3);
  r.created = s.real(4);
  r.updated = s.real(5);
  r.heartbeat = s.is_null(6) ? 0 : s.real(6);
  r.ended = s.is_null(7) ? 0 : s.real(7);
  r.dataset = s.text(8);
  r.model = s.text(9);
  r.n_params = s.int64(10);
  r.device = s.text(11);
  r.gpu_name = s.text(12);
  r.world_size = s.int64(13);
  r.torch_version = s.text(14);
  r.cuda_version = s.text(15);
  r.host = s.text(16);
  r.pid = s.int64(17);
  r.total_steps = s.int64(18);
  r.tokens_per_step = s.int64(19);
  r.error = s.text(20);
  r.tags_json = s.text(21);
  r.notes = s.text(22);
  r.tokamak_version = s.text(23);
  return r;
}

int64_t RunStore::insert_run(const RunInfo& r) {
  Stmt s(*db_,
         "INSERT INTO runs (uid, name, status, created, updated, heartbeat, ended, dataset, model, "
         "n_params, device, gpu_name, world_size, torch_version, cuda_version, host, pid, total_steps, "
         "tokens_per_step, error, tags, notes, config_json, tokamak_version) "
         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, r.uid).bind(2, r.name).bind(3, r.status).bind(4, r.created).bind(5, r.updated);
  if (r.heartbeat != 0) s.bind(6, r.heartbeat);
  if (r.ended != 0) s.bind(7, r.ended);
  s.bind(8, r.dataset).bind(9, r.model).bind(10, r.n_params).bind(11, r.device).bind(12, r.gpu_name);
  s.bind(13, r.world_size).bind(14, r.torch_version).bind(15, r.cuda_version).bind(16, r.host);
  s.bind(17, r.pid).bind(18, r.total_steps).bind(19, r.tokens_per_step).bind(20, r.error);
  s.bind(21, r.tags_json).bind(22, r.notes).bind(23, r.config_json).bind(24, r.tokamak_version);
  s.run();
  return db_->last_insert_id();
}

std::vector<RunListing> RunStore::list_runs(int64_t limit) {
  // Four primary-key lookups in run_summary per run; the metrics table is never touched.
  std::string sql = "SELECT " + run_columns(schema_) +
                    ", (SELECT max(last_step) FROM run_summary WHERE run_id = runs.id)"
                    ", (SELECT last FROM run_summary WHERE run_id = runs.id AND metric = 'train_loss')"
                    ", (SELECT min FROM run_summary WHERE run_id = runs.id AND metric = 'val_loss')"
                    ", (SELECT last FROM run_summary WHERE run_id = runs.id AND metric = 'tok_s')"
                    ", (SELECT last FROM run_summary WHERE run_id = runs.id AND metric = 'eta_s')"
                    " FROM runs ORDER BY id DESC LIMIT ?";
  Stmt s(*db_, sql.c_str());
  s.bind(1, limit > 0 ? limit : int64_t{-1});
  std::vector<RunListing> out;
  while (s.step()) {
    RunListing l;
    l.run = read_run(s);
    l.last_step = s.is_null(kNumRunColumns) ? 0 : s.int64(kNumRunColumns);
    l.train_loss = s.real(kNumRunColumns + 1);
    l.best_val_loss = s.real(kNumRunColumns + 2);
    l.tok_s = s.real(kNumRunColumns + 3);
    l.eta_s = s.is_null(kNumRunColumns + 4) ? -1 : s.real(kNumRunColumns + 4);
    out.push_back(std::move(l));
  }
  return out;
}

static Error unknown_run(const std::string& what, const std::string& path) {
  return Error("no run " + what + " in " + path, "`tokamak runs list --db " + path + "` shows the ids");
}

RunInfo RunStore::run(int64_t run_id) {
  Stmt s(*db_, ("SELECT " + run_columns(schema_) + ", config_json FROM runs WHERE id = ?").c_str());
  s.bind(1, run_id);
  if (!s.step()) throw unknown_run(std::to_string(run_id), path_);
  RunInfo r = read_run(s);
  r.config_json = current_config_text(s.text(kNumRunColumns));  // a run of an older release, in today's names
  return r;
}

int64_t RunStore::find_uid(const std::string& uid) {
  Stmt s(*db_, "SELECT id FROM runs WHERE uid = ?");
  s.bind(1, uid);
  return s.step() ? s.int64(0) : 0;
}

int64_t RunStore::resolve(const std::string& key) {
  bool digits = !key.empty() && key.size() < 18 &&
                std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isdigit(c); });
  if (digits) {
    Stmt s(*db_, "SELECT id FROM runs WHERE id = ?");
    s.bind(1, static_cast<int64_t>(std::stoll(key)));
    if (s.step()) return s.int64(0);
  }
  if (int64_t id = find_uid(key)) return id;
  throw unknown_run(key, path_);
}

std::vector<int64_t> RunStore::run_ids() {
  std::vector<int64_t> ids;
  Stmt s(*db_, "SELECT id FROM runs ORDER BY id");
  while (s.step()) ids.push_back(s.int64(0));
  return ids;
}

std::vector<MetricRow> RunStore::metrics(int64_t run_id) {
  // The keys once (a dozen rows), then one range read in primary-key order: step, then key id.
  std::vector<MetricValue> keys;  // indexed by key id
  {
    Stmt k(*db_, "SELECT id, name, integer FROM metric_keys");
    while (k.step()) {
      const auto id = static_cast<size_t>(k.int64(0));
      if (keys.size() <= id) keys.resize(id + 1);
      keys[id] = {k.text(1), 0, k.int64(2) != 0};
    }
  }
  Stmt s(*db_, "SELECT step, key_id, value FROM metric_values WHERE run_id = ? ORDER BY step, key_id");
  s.bind(1, run_id);
  std::vector<MetricRow> rows;
  while (s.step()) {
    const int64_t step = s.int64(0);
    if (rows.empty() || rows.back().step != step) rows.emplace_back().step = step;
    MetricValue v = keys.at(static_cast<size_t>(s.int64(1)));
    v.value = s.real(2);
    rows.back().values.push_back(std::move(v));
  }
  return rows;
}

std::vector<MetricSummary> RunStore::summary(int64_t run_id) {
  Stmt s(*db_,
         "SELECT metric, n, last_step, last, min, max FROM run_summary "
         "LEFT JOIN metric_keys ON metric_keys.name = run_summary.metric WHERE run_id = ? ORDER BY metric_keys.id");
  s.bind(1, run_id);
  std::vector<MetricSummary> out;
  while (s.step()) out.push_back({s.text(0), s.int64(1), s.int64(2), s.real(3), s.real(4), s.real(5)});
  return out;
}

std::vector<std::string> RunStore::metric_keys() {
  Stmt s(*db_, "SELECT name FROM metric_keys ORDER BY id");
  std::vector<std::string> out;
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<PlayRow> RunStore::plays(int64_t run_id) {
  if (schema_ < 9) return {};  // an older store opened read-only has no playground yet: no tries
  Stmt s(*db_, "SELECT id, step, prompt, text, options, created FROM playground WHERE run_id = ? ORDER BY id");
  s.bind(1, run_id);
  std::vector<PlayRow> out;
  while (s.step()) out.push_back({s.int64(0), s.int64(1), s.text(2), s.text(3), s.text(4), s.real(5)});
  return out;
}

std::vector<SampleRow> RunStore::samples(int64_t run_id) {
  Stmt s(*db_, "SELECT step, prompt, text, created FROM samples WHERE run_id = ? ORDER BY step, id");
  s.bind(1, run_id);
  std::vector<SampleRow> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.text(2), s.real(3)});
  return out;
}

std::vector<CheckpointRow> RunStore::checkpoints(int64_t run_id) {
  Stmt s(*db_, "SELECT step, path, created FROM checkpoints WHERE run_id = ? ORDER BY step, id");
  s.bind(1, run_id);
  std::vector<CheckpointRow> out;
  while (s.step()) out.push_back({s.int64(0), s.text(1), s.real(2)});
  return out;
}

}  // namespace tokamak
