// The run store: one SQLite file that keeps every run (its config, metrics per logged step, samples,
// checkpoints) so runs can be listed, compared and exported while other runs are still writing. Opening it
// applies pending migrations and marks runs whose process died as `crashed`.
//
// Metrics are named values (engine/base/run/metrics.h), stored long: one row per (run, step, key) in
// metric_values, the key's name and kind in metric_keys (schema version 3; versions 1 and 2 had one column
// per metric, which made every new metric a migration). A run's history is still one clustered range read
// (the primary key starts with run_id, step). Per-metric last/min/max live in run_summary and are updated with
// every write, so listing runs never reads the metrics table.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/run/events.h"
#include "engine/base/util/host.h"  // now_seconds, this_host: the store's callers use them too
#include "engine/base/util/version.h"

namespace tokamak {

class Db;

// One step of a run as the store holds it: every value recorded at that step, in key order (the order
// the keys were first recorded; the metrics of version 2 come first, in their old column order).
struct MetricRow {
  int64_t step = 0;
  std::vector<MetricValue> values;
  // NaN when the key was not recorded at this step.
  double operator[](const std::string& key) const {
    for (const MetricValue& v : values)
      if (v.key == key) return v.value;
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Sets (or adds) a value; NaN means "not recorded" and is skipped when written.
  void set(const std::string& key, double value, bool integer = false) {
    for (MetricValue& v : values)
      if (v.key == key) {
        v.value = value, v.integer = v.integer || integer;
        return;
      }
    values.push_back({key, value, integer});
  }
};

struct MetricSummary {
  std::string metric;
  int64_t n = 0;          // values recorded
  int64_t last_step = 0;  // step of the last value
  double last = 0, min = 0, max = 0;
};

struct RunInfo {
  int64_t id = 0;                                  // local to this database; uid is what travels with exports
  std::string uid, name, status;                   // status: running | finished | stopped | failed | crashed
  double created = 0, updated = 0, heartbeat = 0;  // unix seconds
  double ended = 0;                                // 0 while not ended
  std::string config_json, dataset, model;
  int64_t n_params = 0;
  std::string device, gpu_name;
  int64_t world_size = 1;
  std::string tokamak_version;  // "" for a run recorded before schema 8
  std::string torch_version, cuda_version, host;
  int64_t pid = 0, total_steps = 0, tokens_per_step = 0;
  std::string error;
  std::string tags_json = "[]";  // a JSON array of strings
  std::string notes;
};

// What `runs list` shows: the run without its config, plus a few summary values (NaN when none).
struct RunListing {
  RunInfo run;
  int64_t last_step = 0;
  double train_loss = 0, best_val_loss = 0, tok_s = 0;
  double eta_s = -1;  // the run's last estimate of its time left (metric eta_s); -1 when it sent none
};

struct SampleRow {
  int64_t step = 0;
  std::string prompt, text;
  double created = 0;
};

// One try in the playground (or `tokamak generate --keep`): a prompt, the sampling settings as JSON
// ({"temperature", "top_k", "top_p", "tokens", "seed"}) and the text made (prompt included), from the run's
// checkpoint at STEP.
struct PlayRow {
  int64_t id = 0;  // set by the store
  int64_t step = 0;
  std::string prompt, text, options_json;
  double created = 0;
};

struct CheckpointRow {
  int64_t step = 0;
  std::string path;
  double created = 0;
};

// What `tokamak bench --kernels` or `train --kernels` found of a run's step (engine/base/perf/speed_of_light.h): each
// kind of work with its time, its least work and its floor under the machine's two limits, which are kept beside
// it. Every run keeps the limits its start stated, profiled or not.
struct KindFloorRow {
  std::string kind;
  double ms = 0, calls = 0;     // measured, per step
  double flops = 0, bytes = 0;  // the least work a step of this kind must do
  double floor_ms = -1;         // -1: its work is not counted
  std::string bound;            // "compute" | "memory" | ""
};
struct SpeedOfLightRecord {
  double matmul_flops = -1, memory_bytes_per_s = -1;  // the limits; -1 unknown
  std::string matmul_source, memory_source;
  std::vector<KindFloorRow> kinds;  // in op_kinds()' order; empty: the run was not profiled
  bool has_limits() const { return matmul_flops > 0 || memory_bytes_per_s > 0; }
};

struct StoreOptions {
  // A running run whose heartbeat is older than this is marked crashed on open. The writer beats about once
  // a second whatever the trainer is doing, so only a dead or frozen process misses two minutes of beats.
  double stale_after_s = 120;
  // Opened by the queue worker that holds this store's queue lock: the lock is its own, not an older worker's
  // (queue_lock.h), so the store may be migrated.
  bool queue_worker = false;
};

// What a store says of itself: its schema, the oldest schema whose reader still reads it, and the Tokamak
// version that last migrated it ("" before schema 8). Read by read_store_state (below).
struct StoreState {
  int schema = 0, min_reader = 0;
  std::string written_by;
};

// data_dir()/runs.db when path is empty.
std::string default_db_path();

class RunStore {
 public:
  // existing: a missing file is an error instead of a new database; when the file or its folder is not
  // writable it is opened read-only (listing, showing and exporting work; writes fail with a clear error).
  enum class Mode { create, existing };
  explicit RunStore(const std::string& path = {}, Mode mode = Mode::create, StoreOptions options = {});
  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const std::string& path() const { return path_; }
  // "" on a local disk; on a network file system one line for the user: the store keeps a rollback journal
  // there (store_fs.h). Commands that set up work other hosts write into (Slurm) print it.
  const std::string& journal_note() const { return journal_note_; }
  // "" when the store could be written and is; otherwise why this build opened a writable store read-only (a
  // newer schema; an older queue worker on an older schema). Commands that only read print it as a note.
  const std::string& read_only_note() const { return read_only_note_; }
  bool read_only() const;
  int schema() const { return schema_; }
  int schema_on_disk();  // PRAGMA user_version now: a program of another build may have migrated the store since  // the store's schema as opened (older or newer when read-only)
  Db& db() { return *db_; }
  // All writes of fn in one transaction (nothing half-written when fn throws).
  void transaction(const std::function<void()>& fn);

  // --- writing (call inside transaction()) ---
  // Creates the run, or when its uid exists continues it: status back to running, rows after
  // start.start_step dropped (the resumed run writes them again). Returns the run id.
  int64_t begin_run(const RunStart& start, double now, int64_t pid);
  // Drops the run's metrics and samples after STEP: a resume from a checkpoint, or a rollback to one, trains those
  // steps again.
  void forget_after(int64_t run_id, int64_t step);
  // Wall seconds already on the clock of a resumed run, to add to the trainer's per-resume wall_s.
  double wall_offset(int64_t run_id);
  // Upserts the rows (reported values overwrite, NaN leaves a value alone) and folds them into run_summary.
  // A key seen for the first time is added to metric_keys (integer from its first value).
  void add_metrics(int64_t run_id, const std::vector<MetricRow>& rows);
  void add_sample(int64_t run_id, const SampleRow& s);
  void add_checkpoint(int64_t run_id, const CheckpointRow& c);
  int64_t add_play(int64_t run_id, const PlayRow& p);  // returns its id
  void heartbeat(int64_t run_id, double now);
  void end_run(int64_t run_id, const std::string& status, const std::string& error, double now);
  int64_t insert_run(const RunInfo& run);  // for import: every field as given, a new id
  void recompute_summary(int64_t run_id);
  void delete_run(int64_t run_id);
  void set_tags(int64_t run_id, const std::string& tags_json, const std::string& notes);

  // --- reading ---
  std::vector<RunListing> list_runs(int64_t limit = 0);
  RunInfo run(int64_t run_id);               // throws "no run N in FILE" with a hint
  int64_t find_uid(const std::string& uid);  // 0 when absent
  // A run id ("42") or a uid; throws the unknown-run error otherwise.
  int64_t resolve(const std::string& id_or_uid);
  std::vector<int64_t> run_ids();
  std::vector<MetricRow> metrics(int64_t run_id);
  std::vector<MetricSummary> summary(int64_t run_id);  // in key order
  // Every metric key any run recorded, in key order.
  std::vector<std::string> metric_keys();
  std::vector<SampleRow> samples(int64_t run_id);
  std::vector<CheckpointRow> checkpoints(int64_t run_id);
  std::vector<PlayRow> plays(int64_t run_id);  // oldest first
  // The run's speed-of-light table (speed_of_light_store.cpp): set replaces what the run had; a record with no
  // kinds keeps the limits alone (what an imported run that was never profiled had).
  void set_speed_of_light(int64_t run_id, const SpeedOfLightRecord& record);
  // The limits alone, as a run's start states them (begin_run): replaces the run's limits unless its kinds are
  // stored, whose floors were computed under the limits beside them. Nothing when neither limit is known.
  void set_machine_limits(int64_t run_id, const SpeedOfLightRecord& limits);
  SpeedOfLightRecord speed_of_light(int64_t run_id);
  // The runs with a speed-of-light table (profiled), oldest first: what a plan reads its fractions from.
  std::vector<int64_t> profiled_runs();

  // Marks running runs whose process is gone as crashed; returns how many. Called by the constructor.
  int mark_crashed();
  // Resuming a run that another live process is still training would have two writers on one run row (and
  // one checkpoint folder): throws an Error naming the run, its pid and host when the run with this uid is
  // `running` (after mark_crashed, that means its process is alive or its heartbeat is fresh).
  void refuse_live_run(const std::string& uid);

 private:
  std::string path_;
  StoreOptions options_;
  std::string journal_note_, read_only_note_;
  int schema_ = 0;
  std::unique_ptr<Db> db_;
  std::pair<std::string, std::string> reason_to_leave_alone(const StoreState& st) const;
};

// The kernel table of run RUN_ID, stored after the run's own writer has closed DB (`train --kernels`, a bench
// rung). The run has ended as it ended: a store that cannot take the table now (locked by a long import, a full
// disk) costs the table, not the run's status. "" when stored, else why not, in one line.
std::string store_speed_of_light(const std::string& db, int64_t run_id, const SpeedOfLightRecord& record);

// --- store_schema.cpp ---
constexpr int kSchemaVersion = kFormats.store_schema;
// The oldest schema this build reads as it is (read-only): 6 and 7 hold the tables of 8 but runs' versions.
constexpr int kOldestReadableSchema = 6;
constexpr int32_t kApplicationId = 0x546b6d6b;  // "Tkmk" in the SQLite header: marks a Tokamak database
// The SQL of schema version 1 exactly as the first release wrote it (tests build a v1 database from it).
const char* schema_v1_sql();
// Throws when the file is not a Tokamak store.
StoreState read_store_state(Db& db);
// Checks that db is a Tokamak database this build can read, and migrates it to kSchemaVersion. Read-only: a
// store of schema kOldestReadableSchema or later that this build reads as it is (a newer one whose min_reader
// allows it). WAL unless `rollback_journal` (a store on a network file system: store_fs.h).
void prepare_schema(Db& db, bool rollback_journal = false);

}  // namespace tokamak
