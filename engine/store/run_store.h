// The run store: one SQLite file that keeps every run (its config, metrics per logged step, samples,
// checkpoints) so runs can be listed, compared and exported while other runs are still writing. Opening it
// applies pending migrations and marks runs whose process died as `crashed`.
//
// Metrics are wide rows, one per logged step (see metric_infos()): every step reports the same dozen
// numbers, so one row keyed by (run_id, step) is a twelfth of the rows a long (run, step, metric, value)
// table needs, a run's history is one clustered range read, and an eval result merges into its step's row.
// NaN (NULL in SQL) means "not reported at this step". Per-metric last/min/max live in run_summary and are
// updated with every write, so listing runs never reads the metrics table.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/train/events.h"

namespace tokamak {

class Db;

enum class Metric {
  tokens, wall_s, train_loss, val_loss, lr, grad_norm, tok_s, mfu, step_ms, mem_allocated, mem_reserved, mem_peak
};
constexpr int kNumMetrics = 12;
struct MetricInfo {
  const char* name;  // the column name, also the metric name in exports
  bool integer;      // stored and exported as an integer
};
const std::array<MetricInfo, kNumMetrics>& metric_infos();
int metric_index(const std::string& name);  // -1 when unknown

struct MetricRow {
  int64_t step = 0;
  std::array<double, kNumMetrics> v;
  MetricRow() { v.fill(std::numeric_limits<double>::quiet_NaN()); }
  double& operator[](Metric m) { return v[static_cast<int>(m)]; }
  double operator[](Metric m) const { return v[static_cast<int>(m)]; }
};

struct MetricSummary {
  std::string metric;
  int64_t n = 0;          // values recorded
  int64_t last_step = 0;  // step of the last value
  double last = 0, min = 0, max = 0;
};

struct RunInfo {
  int64_t id = 0;  // local to this database; uid is what travels with exports
  std::string uid, name, status;  // status: running | finished | stopped | failed | crashed
  double created = 0, updated = 0, heartbeat = 0;  // unix seconds
  double ended = 0;                                // 0 while not ended
  std::string config_json, dataset, model;
  int64_t n_params = 0;
  std::string device, gpu_name;
  int64_t world_size = 1;
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
};

struct SampleRow {
  int64_t step = 0;
  std::string prompt, text;
  double created = 0;
};

struct CheckpointRow {
  int64_t step = 0;
  std::string path;
  double created = 0;
};

struct StoreOptions {
  // A running run whose heartbeat is older than this is marked crashed on open. The writer beats about once
  // a second whatever the trainer is doing, so only a dead or frozen process misses two minutes of beats.
  double stale_after_s = 120;
};

double now_seconds();
std::string this_host();
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
  Db& db() { return *db_; }
  // All writes of fn in one transaction (nothing half-written when fn throws).
  void transaction(const std::function<void()>& fn);

  // --- writing (call inside transaction()) ---
  // Creates the run, or when its uid exists continues it: status back to running, rows after
  // start.start_step dropped (the resumed run writes them again). Returns the run id.
  int64_t begin_run(const RunStart& start, double now, int64_t pid);
  // Wall seconds already on the clock of a resumed run, to add to the trainer's per-resume wall_s.
  double wall_offset(int64_t run_id);
  // Upserts the rows (reported values overwrite, NaN leaves a value alone) and folds them into run_summary.
  void add_metrics(int64_t run_id, const std::vector<MetricRow>& rows);
  void add_sample(int64_t run_id, const SampleRow& s);
  void add_checkpoint(int64_t run_id, const CheckpointRow& c);
  void heartbeat(int64_t run_id, double now);
  void end_run(int64_t run_id, const std::string& status, const std::string& error, double now);
  int64_t insert_run(const RunInfo& run);  // for import: every field as given, a new id
  void recompute_summary(int64_t run_id);
  void delete_run(int64_t run_id);
  void set_tags(int64_t run_id, const std::string& tags_json, const std::string& notes);

  // --- reading ---
  std::vector<RunListing> list_runs(int64_t limit = 0);
  RunInfo run(int64_t run_id);  // throws "no run N in FILE" with a hint
  int64_t find_uid(const std::string& uid);  // 0 when absent
  // A run id ("42") or a uid; throws the unknown-run error otherwise.
  int64_t resolve(const std::string& id_or_uid);
  std::vector<int64_t> run_ids();
  std::vector<MetricRow> metrics(int64_t run_id);
  std::vector<MetricSummary> summary(int64_t run_id);
  std::vector<SampleRow> samples(int64_t run_id);
  std::vector<CheckpointRow> checkpoints(int64_t run_id);

  // Marks running runs whose process is gone as crashed; returns how many. Called by the constructor.
  int mark_crashed();
  // Resuming a run that another live process is still training would have two writers on one run row (and
  // one checkpoint folder): throws an Error naming the run, its pid and host when the run with this uid is
  // `running` (after mark_crashed, that means its process is alive or its heartbeat is fresh).
  void refuse_live_run(const std::string& uid);

 private:
  std::string path_;
  StoreOptions options_;
  std::unique_ptr<Db> db_;
};

// --- store_schema.cpp ---
constexpr int kSchemaVersion = 2;
constexpr int32_t kApplicationId = 0x546b6d6b;  // "Tkmk" in the SQLite header: marks a Tokamak database
// The SQL of schema version 1 exactly as the first release wrote it (tests build a v1 database from it).
const char* schema_v1_sql();
// Checks that db is a Tokamak database this build can read, and migrates it to kSchemaVersion.
void prepare_schema(Db& db);

}  // namespace tokamak
