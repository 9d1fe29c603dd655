// Schema versions of the run store and the migrations between them. PRAGMA user_version holds the version;
// PRAGMA application_id marks the file as Tokamak's. Each migration runs inside one transaction with the
// version bump, so a database is always at exactly one version.
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"

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

// The metric columns of versions 1 and 2, in column order. Version 3 gives them key ids 1..12 in this
// order, so a step's values come out of the long table in the order the wide row had them and exports of
// these metrics stay byte-identical.
struct LegacyMetric {
  const char* name;
  bool integer;
};
static const LegacyMetric kLegacyMetrics[] = {
    {"tokens", true},   {"wall_s", false},       {"train_loss", false},  {"val_loss", false},
    {"lr", false},      {"grad_norm", false},    {"tok_s", false},       {"mfu", false},
    {"step_ms", false}, {"mem_allocated", true}, {"mem_reserved", true}, {"mem_peak", true},
};

// Version 3: metrics as named values, one row per (run, step, key). Values are REAL (an integer metric's
// values are whole numbers below 2^53, exact in a double; metric_keys.integer says how to print them).
static const char* kSchemaV3 = R"SQL(
CREATE TABLE metric_keys (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  integer INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE metric_values (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  key_id INTEGER NOT NULL REFERENCES metric_keys(id),
  value REAL NOT NULL,
  PRIMARY KEY (run_id, step, key_id)
) WITHOUT ROWID;
)SQL";

// Version 4: runs recorded from a journal (engine/base/store/journal_ingest.h) — a run on an SSH host, followed by
// the studio — keep where they live and how far their journal has been read, in the same row and the same
// transaction as the events, so reading a stretch of the journal twice never records an event twice.
static const char* kSchemaV4 = R"SQL(
ALTER TABLE runs ADD COLUMN remote TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN journal_offset INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN journal_wall REAL NOT NULL DEFAULT 0;
)SQL";

// Version 5: the queue of this computer (engine/fleet/queue/run_queue.h) and the sweeps that fill it. A queued run is
// a row with its whole config, so the queue outlives every process that shows or works it; a sweep's trials
// are queue rows, and what each reached at each rung of early stopping is a row of sweep_rungs.
static const char* kSchemaV5 = R"SQL(
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  metric TEXT NOT NULL,
  maximize INTEGER NOT NULL DEFAULT 0,
  min_steps INTEGER NOT NULL DEFAULT 0,
  eta INTEGER NOT NULL DEFAULT 3,
  created REAL NOT NULL
);
CREATE TABLE queue (
  id INTEGER PRIMARY KEY,
  position INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','running','done','failed','removed','stopped')),
  target TEXT NOT NULL DEFAULT 'local',
  name TEXT NOT NULL,
  config_json TEXT NOT NULL,
  run_uid TEXT NOT NULL DEFAULT '',
  folder TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  created REAL NOT NULL,
  started REAL,
  ended REAL,
  sweep_id INTEGER REFERENCES sweeps(id),
  point INTEGER NOT NULL DEFAULT 0,
  rung INTEGER NOT NULL DEFAULT 0,
  halt_step INTEGER NOT NULL DEFAULT 0,
  resume TEXT NOT NULL DEFAULT ''
);
CREATE INDEX queue_state ON queue(state, position);
CREATE TABLE sweep_rungs (
  queue_id INTEGER NOT NULL REFERENCES queue(id) ON DELETE CASCADE,
  rung INTEGER NOT NULL,
  step INTEGER NOT NULL,
  metric REAL,
  val_loss REAL,
  checkpoint TEXT NOT NULL DEFAULT '',
  promoted INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (queue_id, rung)
) WITHOUT ROWID;
CREATE TABLE queue_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
)SQL";

// Version 6: each profiled run's step held against its floor (`--kernels` of bench and train): a row per kind of
// work, and the two limits it was held against with where they came from (which every run's start now writes).
static const char* kSchemaV6 = R"SQL(
CREATE TABLE kind_floors (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL,
  ms REAL NOT NULL,
  calls REAL NOT NULL,
  flops REAL NOT NULL,
  bytes REAL NOT NULL,
  floor_ms REAL NOT NULL,
  bound TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
CREATE TABLE machine_limits (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  matmul_flops REAL NOT NULL,
  matmul_source TEXT NOT NULL,
  memory_bytes_per_s REAL NOT NULL,
  memory_source TEXT NOT NULL
);
)SQL";

const char* schema_v1_sql() { return kSchemaV1; }

static void migrate_to_2(Db& db) {
  db.exec(kSchemaV2);
  // RunStore's recompute works on any open connection; the back-fill is a one-off full read per run.
  std::vector<int64_t> ids;
  Stmt s(db, "SELECT id FROM runs");
  while (s.step()) ids.push_back(s.int64(0));
  for (int64_t id : ids) {
    for (const auto& m : kLegacyMetrics) {
      std::string col = m.name;
      db.exec(
          "INSERT INTO run_summary (run_id, metric, n, last_step, last, min, max) "
          "SELECT " +
          std::to_string(id) + ", '" + col + "', count(" + col +
          "), max(step), "
          "(SELECT " +
          col + " FROM metrics WHERE run_id = " + std::to_string(id) + " AND " + col +
          " IS NOT NULL ORDER BY step DESC LIMIT 1), min(" + col + "), max(" + col +
          ") "
          "FROM metrics WHERE run_id = " +
          std::to_string(id) + " AND " + col +
          " IS NOT NULL "
          "GROUP BY run_id");
    }
  }
}

// Every non-NULL value of the wide table becomes a row; the table is then dropped. run_summary is keyed by
// metric name already and stays as it is.
static void migrate_to_3(Db& db) {
  db.exec(kSchemaV3);
  int64_t id = 0;
  for (const auto& m : kLegacyMetrics) {
    ++id;
    Stmt k(db, "INSERT INTO metric_keys (id, name, integer) VALUES (?, ?, ?)");
    k.bind(1, id).bind(2, std::string(m.name)).bind(3, int64_t{m.integer}).run();
    db.exec(std::string("INSERT INTO metric_values (run_id, step, key_id, value) SELECT run_id, step, ") +
            std::to_string(id) + ", " + m.name + " FROM metrics WHERE " + m.name + " IS NOT NULL");
  }
  db.exec("DROP TABLE metrics");
}

// Version 7 was the config's sections split by concern (engine/base/config/renamed_keys.h): no table changed,
// and its release rewrote every stored config under the new names. Stored text is no longer rewritten (an
// older program still running on the store reads its rows as it wrote them); every reader upgrades on read.
//
// Version 8: each run records the Tokamak that trained it, and the store says which readers it keeps working
// (docs/RELIABILITY.md, "Versions and migrations").
static const char* kSchemaV8 = R"SQL(
ALTER TABLE runs ADD COLUMN tokamak_version TEXT NOT NULL DEFAULT '';
CREATE TABLE store_info (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
)SQL";

// Version 9: what the playground made from a run's checkpoints (its prompts, settings and text) is kept with the run.
// Only a table is added: an 8 program opens a 9 store read-only.
static const char* kSchemaV9 = R"SQL(
CREATE TABLE playground (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  prompt TEXT NOT NULL,
  text TEXT NOT NULL,
  options TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE INDEX playground_run ON playground(run_id, id);
)SQL";

// The oldest schema whose reader reads a store of this one: a later schema that only adds (a column, a table)
// keeps this number, and an 8 program then opens that store read-only instead of refusing it.
constexpr int kMinReader = 8;

// Version 10: a queue row counts how often a stalled run was ended and queued again, so that a restarted worker keeps
// the limit. Only a column is added: a 9 program opens a 10 store read-only.
static const char* kSchemaV10 = R"SQL(
ALTER TABLE queue ADD COLUMN requeues INTEGER NOT NULL DEFAULT 0;
)SQL";

StoreState read_store_state(Db& db) {
  // The first statement that reads the file is where SQLite notices a file that is not a database.
  const int64_t tables = db.query_int("SELECT count(*) FROM sqlite_master");
  const int64_t app_id = db.query_int("PRAGMA application_id");
  StoreState st;
  st.schema = static_cast<int>(db.query_int("PRAGMA user_version"));
  if (app_id != kApplicationId && (app_id != 0 || tables > 0 || st.schema != 0))
    throw Error("'" + db.path() + "' is an SQLite database but not a Tokamak run database",
                "pass the path of a Tokamak runs.db with --db, or leave --db out for the default");
  st.min_reader = st.schema;
  if (db.query_int("SELECT count(*) FROM sqlite_master WHERE name = 'store_info'") > 0) {
    Stmt s(db, "SELECT key, value FROM store_info");
    while (s.step()) {
      if (s.text(0) == "min_reader") st.min_reader = std::atoi(s.text(1).c_str());
      if (s.text(0) == "written_by") st.written_by = s.text(1);
    }
  }
  return st;
}

static std::string newer_store(const std::string& path, const StoreState& st) {
  return "'" + path + "' was written by a newer Tokamak (" +
         (st.written_by.empty() ? "" : "version " + st.written_by + ", ") + "schema " + std::to_string(st.schema) +
         "; this is " + TOKAMAK_VERSION + ", schema " + std::to_string(kSchemaVersion) + ")";
}

void prepare_schema(Db& db, bool rollback_journal) {
  const StoreState st = read_store_state(db);
  const bool readable = st.schema > kSchemaVersion ? st.min_reader <= kSchemaVersion : st.schema >= kOldestReadableSchema;
  if (st.schema > kSchemaVersion && !readable)
    throw Error(newer_store(db.path(), st) + ", which this one cannot read", "update Tokamak, or pass another --db");
  if (db.read_only()) {
    if (st.schema == kSchemaVersion || readable) return;
    throw Error("run database '" + db.path() + "' needs an upgrade (schema " + std::to_string(st.schema) + " → " +
                    std::to_string(kSchemaVersion) + ") but cannot be written" +
                    (db.read_only_reason().empty() ? "" : " now: " + db.read_only_reason()),
                db.read_only_reason().empty() ? "open it once with write access, or copy it somewhere writable"
                                              : db.read_only_hint());
  }
  if (st.schema > kSchemaVersion)
    throw Error(newer_store(db.path(), st) + ", opened for writing", "open it read-only, or update Tokamak");
  db.exec(rollback_journal ? "PRAGMA journal_mode = DELETE" : "PRAGMA journal_mode = WAL");
  if (st.schema == kSchemaVersion) return;
  db.transaction([&] {
    // Another process may have migrated between our check and the write lock.
    int64_t v = db.query_int("PRAGMA user_version");
    if (v > kSchemaVersion) throw Error(newer_store(db.path(), read_store_state(db)) + " meanwhile", "run this again");
    if (v < 1) db.exec(kSchemaV1);
    if (v < 2) migrate_to_2(db);
    if (v < 3) migrate_to_3(db);
    if (v < 4) db.exec(kSchemaV4);
    if (v < 5) db.exec(kSchemaV5);
    if (v < 6) db.exec(kSchemaV6);
    if (v < 8) db.exec(kSchemaV8);
    if (v < 9) db.exec(kSchemaV9);
    if (v < 10) db.exec(kSchemaV10);
    Stmt info(db, "INSERT OR REPLACE INTO store_info (key, value) VALUES (?, ?)");
    info.bind(1, std::string("min_reader")).bind(2, std::to_string(kMinReader)).run();
    info.bind(1, std::string("written_by")).bind(2, std::string(TOKAMAK_VERSION)).run();
    db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  });
}

}  // namespace tokamak
