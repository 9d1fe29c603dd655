// Schema versions of the run store and the migrations between them. PRAGMA user_version holds the version;
// PRAGMA application_id marks the file as Tokamak's. Each migration runs inside one transaction with the
// version bump, so a database is always at exactly one version.
#include <string>
#include <vector>

#include "engine/store/run_store.h"
#include "engine/store/sqlite_db.h"
#include "engine/util/error.h"

namespace tokamak {

// Version 1: runs, wide metrics rows, samples, checkpoints. Never edit: databases in the wild have it.
static const char* kSchemaV1 = R"SQL(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('running','finished','stopped','failed','crashed')),
  created REAL NOT NULL,
  updated REAL NOT NULL,
  ended REAL,
  heartbeat REAL,
  config_json TEXT NOT NULL DEFAULT '',
  dataset TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  n_params INTEGER NOT NULL DEFAULT 0,
  device TEXT NOT NULL DEFAULT '',
  gpu_name TEXT NOT NULL DEFAULT '',
  world_size INTEGER NOT NULL DEFAULT 1,
  torch_version TEXT NOT NULL DEFAULT '',
  cuda_version TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  pid INTEGER NOT NULL DEFAULT 0,
  total_steps INTEGER NOT NULL DEFAULT 0,
  tokens_per_step INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  tokens INTEGER, wall_s REAL, train_loss REAL, val_loss REAL, lr REAL, grad_norm REAL, tok_s REAL, mfu REAL,
  mem_allocated INTEGER, mem_reserved INTEGER, mem_peak INTEGER,
  PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE samples (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  prompt TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE INDEX samples_run ON samples(run_id, step);
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  path TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints(run_id, step);
PRAGMA application_id = 1416326507;
)SQL";

// Version 2: tags and notes, step time, and the per-metric summary that keeps `runs list` off the metrics
// table (back-filled from the metrics version 1 recorded).
static const char* kSchemaV2 = R"SQL(
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT '';
ALTER TABLE metrics ADD COLUMN step_ms REAL;
CREATE TABLE run_summary (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  n INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  last REAL, min REAL, max REAL,
  PRIMARY KEY (run_id, metric)
) WITHOUT ROWID;
)SQL";

const char* schema_v1_sql() { return kSchemaV1; }

static void migrate_to_2(Db& db) {
  db.exec(kSchemaV2);
  // RunStore's recompute works on any open connection; the back-fill is a one-off full read per run.
  std::vector<int64_t> ids;
  Stmt s(db, "SELECT id FROM runs");
  while (s.step()) ids.push_back(s.int64(0));
  for (int64_t id : ids) {
    for (const auto& m : metric_infos()) {
      std::string col = m.name;
      db.exec("INSERT INTO run_summary (run_id, metric, n, last_step, last, min, max) "
              "SELECT " + std::to_string(id) + ", '" + col + "', count(" + col + "), max(step), "
              "(SELECT " + col + " FROM metrics WHERE run_id = " + std::to_string(id) + " AND " + col +
              " IS NOT NULL ORDER BY step DESC LIMIT 1), min(" + col + "), max(" + col + ") "
              "FROM metrics WHERE run_id = " + std::to_string(id) + " AND " + col + " IS NOT NULL "
              "GROUP BY run_id");
    }
  }
}

void prepare_schema(Db& db) {
  // The first statement that reads the file is where SQLite notices a file that is not a database.
  int64_t tables = db.query_int("SELECT count(*) FROM sqlite_master");
  int64_t app_id = db.query_int("PRAGMA application_id");
  int64_t version = db.query_int("PRAGMA user_version");
  if (app_id != kApplicationId && (app_id != 0 || tables > 0 || version != 0))
    throw Error("'" + db.path() + "' is an SQLite database but not a Tokamak run database",
                "pass the path of a Tokamak runs.db with --db, or leave --db out for the default");
  if (version > kSchemaVersion)
    throw Error("'" + db.path() + "' was written by a newer Tokamak (schema " + std::to_string(version) +
                    ", this one knows " + std::to_string(kSchemaVersion) + ")",
                "update Tokamak, or pass another --db");
  if (db.read_only()) {
    if (version == kSchemaVersion) return;
    throw Error("run database '" + db.path() + "' needs an upgrade (schema " + std::to_string(version) + " → " +
                    std::to_string(kSchemaVersion) + ") but cannot be written",
                "open it once with write access, or copy it somewhere writable");
  }
  db.exec("PRAGMA journal_mode = WAL");
  if (version == kSchemaVersion) return;
  db.transaction([&] {
    // Another process may have migrated between our check and the write lock.
    int64_t v = db.query_int("PRAGMA user_version");
    if (v < 1) db.exec(kSchemaV1);
    if (v < 2) migrate_to_2(db);
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  });
}

}  // namespace tokamak
