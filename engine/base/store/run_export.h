// Export of runs at full resolution (every recorded row, never down-sampled) as CSV, JSON or Markdown, and
// import of the JSON export. Numbers are written in the shortest form that reads back to the same double,
// and everything is ordered (runs by the order asked, rows by step), so export -> import -> export gives
// byte-identical files.
//   CSV (long): run,step,metric,value — run is the uid; loads straight into pandas or a spreadsheet.
//   JSON: {"tokamak_export": 1, "runs": [{run fields..., "config": {...}, "metrics": [{"step": 1, ...}],
//          "samples": [...], "checkpoints": [...], "speed_of_light": {limits, "kinds": [...]}}]} — absent
//          metrics are left out of a row; speed_of_light only for a run with limits (its start's) or a profile
//          (`--kernels`).
//   Markdown: the compare scoreboard of the runs.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/base/store/run_groups.h"

namespace tokamak {

class RunStore;

constexpr int kExportVersion = 1;

enum class ExportFormat { csv, json, md };
// "csv" | "json" | "md" (also "markdown"); an Error naming the choices otherwise.
ExportFormat parse_export_format(const std::string& name);

// ids empty = every run, oldest first. md is the scoreboard; with GROUP (run_groups.h) it has the groups' rows and
// their verdicts against the baseline's group (the first run's), as `runs compare --group` prints them, and json
// gains a "groups" list with the same verdicts as numbers (test "welch", diff, ci95_low/high, p, df, resolved,
// seeds_needed). json carries each run's playground tries ("playground"), which import keeps.
void export_runs(RunStore& store, const std::vector<int64_t>& ids, ExportFormat format, std::ostream& out,
                 const GroupSpec& group = {});

// export_runs into the file PATH, written to a temporary and renamed, by the rule for outputs (output_path.h): never
// the store itself, a link or anything that is not a plain file; an earlier export with the format's extension
// only with REPLACE (--force, or the studio's save dialog that asked).
void export_runs_to_file(RunStore& store, const std::vector<int64_t>& ids, ExportFormat format,
                         const std::string& path, const GroupSpec& group, bool replace);

struct ImportResult {
  std::vector<int64_t> imported;     // new local ids
  std::vector<std::string> skipped;  // uids already in the store (only with skip_existing)
};
// Reads a JSON export into the store in one transaction: on any error nothing is imported. A uid already in
// the store is an error naming the run to delete, unless skip_existing.
ImportResult import_runs(RunStore& store, const std::string& path, bool skip_existing = false);

}  // namespace tokamak
