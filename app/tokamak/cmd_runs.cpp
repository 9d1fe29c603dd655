// `tokamak runs`: list, show, compare, export, import and delete the runs kept in the run store.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "app/tokamak/cmd_runs_live.h"
#include "app/cli/commands.h"
#include "engine/base/run/layer_metrics.h"
#include "engine/fleet/export/mlflow_export.h"
#include "engine/fleet/export/tensorboard_export.h"
#include "engine/fleet/notify/notify.h"
#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"

namespace tokamak::cli {
namespace {

struct RunsArgs {
  std::string db;
  std::vector<std::string> ids;
  std::string baseline, format = "json", out, file, stat = "last", group;
  int64_t limit = 0;
  bool json = false, live = false;  // list --json: run folders with their state (cmd_runs_live.h)
  bool skip_existing = false, force = false;
  std::vector<std::string> add_tags, remove_tags;
  std::optional<std::string> notes;
  std::vector<std::string> to;      // export --to mlflow URL
  std::string experiment = "tokamak";
};

// Reading commands open an explicit --db only if it exists (a typo must not create an empty database);
// the default database is created on first use so `runs list` works on a fresh machine.
std::unique_ptr<RunStore> open_store(const RunsArgs& a, bool create = false) {
  auto mode = create || a.db.empty() ? RunStore::Mode::create : RunStore::Mode::existing;
  auto store = std::make_unique<RunStore>(a.db, mode);
  if (!store->read_only_note().empty())
    std::fprintf(stderr, "tokamak: note: %s is opened read-only: %s\n", store->path().c_str(),
                 store->read_only_note().c_str());
  return store;
}

std::string when(double t) {
  if (t <= 0) return "-";
  std::time_t s = static_cast<std::time_t>(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&s));
  return buf;
}

std::string num(const char* f, double v) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void list(const RunsArgs& a) {
  if (a.json) return print_run_folders(a.live);
  if (a.live) throw Error("--live lists run folders", "use it with --json: `tokamak runs list --json --live`");
  auto store = open_store(a);
  auto runs = store->list_runs(a.limit);
  if (runs.empty()) {
    std::cout << "no runs in " << store->path() << "\n";
    return;
  }
  std::vector<std::vector<std::string>> t = {
      {"id", "name", "status", "created", "steps", "loss", "best val", "last tok/s", "time left", "model", "device"}};
  for (const RunListing& l : runs) {
    const RunInfo& r = l.run;
    std::string steps = std::to_string(l.last_step) + (r.total_steps ? "/" + std::to_string(r.total_steps) : "");
    // A running run's own estimate at its last report (evaluations included), and the clock time it ends.
    std::string left;
    if (r.status == "running" && l.eta_s >= 0)
      left = format_duration(l.eta_s) + " (ends " + when(r.updated + l.eta_s).substr(11, 5) + ")";
    t.push_back({std::to_string(r.id), r.name, r.status, when(r.created), steps, num("%.4f", l.train_loss),
                 num("%.4f", l.best_val_loss), format_count(l.tok_s), left, r.model, r.device});
  }
  std::cout << format_text_table(t);
}

void show(const RunsArgs& a) {
  auto store = open_store(a);
  int64_t id = store->resolve(a.ids.at(0));
  RunInfo r = store->run(id);
  std::vector<std::vector<std::string>> f = {
      {"run", "#" + std::to_string(r.id) + " " + r.name},
      {"uid", r.uid},
      {"status", r.status + (r.error.empty() ? "" : " (" + r.error + ")")},
      {"created", when(r.created)},
      {"ended", when(r.ended)},
      {"model", r.model + " (" + std::to_string(r.n_params) + " parameters)"},
      {"dataset", r.dataset},
      {"device", r.device + (r.gpu_name.empty() ? "" : " " + r.gpu_name) + " ×" + std::to_string(r.world_size)},
      {"versions", (r.tokamak_version.empty() ? "" : "Tokamak " + r.tokamak_version + ", ") + "LibTorch " +
                       r.torch_version + (r.cuda_version.empty() ? "" : ", CUDA " + r.cuda_version)},
      {"host", r.host + " (pid " + std::to_string(r.pid) + ")"},
      {"tags", r.tags_json},
      {"notes", r.notes}};
  std::cout << format_text_table(f) << "\n";
  std::vector<std::vector<std::string>> m = {{"metric", "values", "last step", "last", "min", "max"}};
  size_t layer_keys = 0;  // per-layer statistics: a count here, heatmaps in the studio, every value in the exports
  for (const MetricSummary& s : store->summary(id))
    if (is_layer_metric(s.metric)) ++layer_keys;
    else
      m.push_back({s.metric, std::to_string(s.n), std::to_string(s.last_step), num("%.6g", s.last), num("%.6g", s.min),
                   num("%.6g", s.max)});
  std::cout << format_text_table(m);
  if (layer_keys)
    std::cout << "per-layer statistics: " << layer_keys
              << " series (the studio's heatmaps; `runs export` writes every value)\n";
  auto ckpts = store->checkpoints(id);
  std::cout << "\ncheckpoints: " << ckpts.size() << "\n";
  for (const CheckpointRow& c : ckpts) std::cout << "  step " << c.step << "  " << c.path << "\n";
  auto samples = store->samples(id);
  std::cout << "samples: " << samples.size() << "\n";
  if (!samples.empty()) std::cout << "  last (step " << samples.back().step << "): " << samples.back().text << "\n";
  auto plays = store->plays(id);  // the playground's tries (`generate --keep`)
  std::cout << "playground: " << plays.size() << "\n";
  if (!plays.empty())
    std::cout << "  last (step " << plays.back().step << ", " << plays.back().options_json << "): " << plays.back().text
              << "\n";
  nlohmann::json config = nlohmann::json::parse(r.config_json, nullptr, false);
  std::cout << "\nconfig:\n" << (config.is_discarded() ? r.config_json : config.dump(2)) << "\n";
}

// The runs profiled by `bench --kernels` or `train --kernels`, side by side: each kind's time per step and its floor,
// so that a switch shows which kind it moved toward its floor. Nothing when no run was profiled.
void print_speed_of_light(RunStore& store, const std::vector<int64_t>& ids, const std::vector<ScoreInput>& inputs) {
  std::vector<SpeedOfLightRecord> records;
  bool any = false;
  for (int64_t id : ids) records.push_back(store.speed_of_light(id)), any = any || !records.back().kinds.empty();
  if (!any) return;
  std::vector<std::string> kinds;
  for (const SpeedOfLightRecord& r : records)
    for (const KindFloorRow& k : r.kinds)
      if (std::find(kinds.begin(), kinds.end(), k.kind) == kinds.end()) kinds.push_back(k.kind);
  std::vector<std::vector<std::string>> t = {{"kind: ms/step (floor)"}};
  for (const ScoreInput& in : inputs) t[0].push_back(in.label);
  std::vector<std::string> total = {"step"};
  for (const std::string& kind : kinds) {
    t.push_back({kind});
    for (const SpeedOfLightRecord& r : records) {
      auto it = std::find_if(r.kinds.begin(), r.kinds.end(), [&](const KindFloorRow& k) { return k.kind == kind; });
      if (it == r.kinds.end()) t.back().push_back(r.kinds.empty() ? "not profiled" : "-");
      else t.back().push_back(num("%.2f", it->ms) + (it->floor_ms >= 0 ? " (" + num("%.2f", it->floor_ms) + ")" : ""));
    }
  }
  for (const SpeedOfLightRecord& r : records) {
    double ms = 0, floor = 0;
    for (const KindFloorRow& k : r.kinds) ms += k.ms, floor += k.floor_ms >= 0 ? k.floor_ms : 0;
    total.push_back(r.kinds.empty() ? "-" : num("%.2f", ms) + " (" + num("%.2f", floor) + ")");
  }
  t.push_back(total);
  std::cout << "\nspeed of light (--kernels):\n" << format_text_table(t);
}

void compare(const RunsArgs& a) {
  check_metric_stat(a.stat);  // before any output
  const GroupSpec group = parse_group_spec(a.group);
  auto store = open_store(a);
  std::vector<int64_t> ids;
  for (const std::string& key : a.ids) ids.push_back(store->resolve(key));
  size_t baseline = 0;
  if (!a.baseline.empty()) {
    int64_t b = store->resolve(a.baseline);
    auto it = std::find(ids.begin(), ids.end(), b);
    if (it == ids.end()) ids.insert(ids.begin(), b);  // a baseline outside the list leads the table
    else baseline = static_cast<size_t>(it - ids.begin());
  }
  std::vector<ScoreInput> inputs;
  std::vector<GroupInput> members;
  for (int64_t id : ids) inputs.push_back(score_input(*store, id)), members.push_back(group_input(store->run(id)));
  Scoreboard board = build_scoreboard(inputs, baseline);
  if (group.by != GroupSpec::By::kNone) add_group_rows(board, group_runs(members, group));
  std::cout << format_scoreboard_text(board);
  // Then every metric any of the runs recorded, by name (the last value of each, or --stat): a metric added
  // to the trainer shows up here without an edit.
  std::vector<std::vector<MetricSummary>> sums;
  std::vector<std::string> keys, head = {"metric (" + metric_stat_label(a.stat) + ")"};
  for (size_t i = 0; i < ids.size(); ++i) {
    head.push_back(inputs[i].label);
    sums.push_back(store->summary(ids[i]));
    for (const MetricSummary& s : sums.back())
      if (!is_layer_metric(s.metric) && std::find(keys.begin(), keys.end(), s.metric) == keys.end())
        keys.push_back(s.metric);
  }
  std::vector<std::vector<MetricRow>> rows;  // every value, for the stats the summary does not keep
  if (a.stat != "last")
    for (int64_t id : ids) rows.push_back(store->metrics(id));
  std::vector<std::vector<std::string>> t = {head};
  for (const std::string& key : keys) {
    t.push_back({key});
    for (size_t r = 0; r < sums.size(); ++r) {
      const auto& run = sums[r];
      auto it = std::find_if(run.begin(), run.end(), [&](const MetricSummary& s) { return s.metric == key; });
      if (it == run.end() || a.stat == "last") {
        t.back().push_back(it == run.end() ? "-" : num("%.6g", it->last));
        continue;
      }
      std::vector<double> values;
      for (const MetricRow& row : rows[r]) values.push_back(row[key]);
      const double v = summarize_metric(key, values, a.stat);
      t.back().push_back(std::isnan(v) ? "-" : num("%.6g", v));
    }
  }
  std::cout << "\n" << format_text_table(t);
  print_speed_of_light(*store, ids, inputs);
}

// --to mlflow URL: the runs logged to a tracking server (engine/fleet/export/mlflow_export.h).
void export_to(const RunsArgs& a, RunStore& store, const std::vector<int64_t>& ids) {
  if (a.to.size() != 2 || a.to[0] != "mlflow")
    throw Error("--to takes a tool and its address: --to mlflow URL", "e.g. --to mlflow http://127.0.0.1:5000");
  MlflowOptions o;
  o.url = a.to[1], o.experiment = a.experiment, o.force = a.force;
  if (const char* token = std::getenv("MLFLOW_TRACKING_TOKEN")) o.token = token;
  const auto runs = export_mlflow(store, ids, o, [](const std::string& line) { std::cerr << line << "\n"; });
  std::cerr << "logged " << runs.size() << " run(s) to MLflow experiment '" << o.experiment << "' at "
            << redacted_url(o.url) << "\n";
  for (const MlflowRun& r : runs) std::cout << r.run_id << "\n";
}

void do_export(const RunsArgs& a) {
  if (!a.to.empty() || a.format == "tensorboard") {
    auto store = open_store(a);
    std::vector<int64_t> ids;
    for (const std::string& key : a.ids) ids.push_back(store->resolve(key));
    if (!a.to.empty()) return export_to(a, *store, ids);
    if (a.out.empty() || a.out == "-")
      throw Error("--format tensorboard writes a folder of event files",
                  "name it with --out DIR (TensorBoard's --logdir)");
    const TensorboardExport t = export_tensorboard(*store, ids, a.out, a.force);
    std::cerr << "wrote " << t.files.size() << " run(s) to " << a.out << " (" << t.scalars << " scalars, " << t.texts
              << " texts): tensorboard --logdir " << a.out << "\n";
    return;
  }
  ExportFormat format = parse_export_format(a.format);
  const GroupSpec group = parse_group_spec(a.group);
  if (group.by != GroupSpec::By::kNone && format == ExportFormat::csv)
    throw Error("--group applies to --format md and json (the groups and their verdicts)",
                "drop --group, or export --format md or json");
  auto store = open_store(a);
  std::vector<int64_t> ids;
  for (const std::string& key : a.ids) ids.push_back(store->resolve(key));
  if (a.out.empty() || a.out == "-") {
    export_runs(*store, ids, format, std::cout, group);
    std::cout.flush();
    return;
  }
  export_runs_to_file(*store, ids, format, a.out, group, a.force);
  std::cerr << "wrote " << a.out << "\n";
}

void do_import(const RunsArgs& a) {
  auto store = open_store(a, true);
  ImportResult r = import_runs(*store, a.file, a.skip_existing);
  std::cerr << "imported " << r.imported.size() << " run(s) into " << store->path();
  if (!r.skipped.empty()) std::cerr << ", skipped " << r.skipped.size() << " already there";
  std::cerr << "\n";
  for (int64_t id : r.imported) std::cout << id << "\n";
}

void do_delete(const RunsArgs& a) {
  auto store = open_store(a);
  int64_t id = store->resolve(a.ids.at(0));
  RunInfo r = store->run(id);
  if (r.status == "running" && !a.force)
    throw Error("run " + std::to_string(id) + " is still running (pid " + std::to_string(r.pid) + " on " + r.host + ")",
                "stop it first, or pass --force to delete it anyway");
  store->transaction([&] { store->delete_run(id); });
  std::cerr << "deleted run " << id << " (" << r.name << ")\n";
}

void tag(const RunsArgs& a) {
  auto store = open_store(a);
  int64_t id = store->resolve(a.ids.at(0));
  RunInfo r = store->run(id);
  nlohmann::json tags = nlohmann::json::parse(r.tags_json, nullptr, false);
  if (!tags.is_array()) tags = nlohmann::json::array();
  for (const std::string& t : a.add_tags)
    if (std::find(tags.begin(), tags.end(), t) == tags.end()) tags.push_back(t);
  for (const std::string& t : a.remove_tags) tags.erase(std::remove(tags.begin(), tags.end(), t), tags.end());
  store->transaction([&] { store->set_tags(id, tags.dump(), a.notes.value_or(r.notes)); });
  std::cout << tags.dump() << "\n";
}

}  // namespace

void add_runs_command(CLI::App& app) {
  auto args = std::make_shared<RunsArgs>();
  CLI::App* runs = app.add_subcommand("runs", "List, compare, export and import the runs kept in the run store");
  runs->require_subcommand(1);
  auto db_opt = [&](CLI::App* c) {
    c->add_option("--db", args->db, "run database (default: $XDG_DATA_HOME/tokamak/runs.db)");
  };
  CLI::App* c = runs->add_subcommand("list", "List runs, newest first");
  db_opt(c);
  c->add_option("--limit", args->limit, "show at most N runs");
  c->add_flag("--json", args->json,
              "one JSON object per line for each run folder on this machine (uid, name, folder, state: running, "
              "paused, finished, stopped, failed or crashed; pid, journal_bytes), newest first");
  c->add_flag("--live", args->live, "with --json: only runs that are running or paused");
  c->callback([args] { list(*args); });

  c = runs->add_subcommand("show", "Show one run: fields, metric summary, checkpoints, config");
  db_opt(c);
  c->add_option("id", args->ids, "run id or uid")->required()->expected(1);
  c->callback([args] { show(*args); });

  c = runs->add_subcommand("compare", "Scoreboard of runs: tok/s, speedup, MFU, memory, val loss, config diff");
  db_opt(c);
  c->add_option("ids", args->ids, "run ids or uids; the first is the baseline")->required();
  c->add_option("--baseline", args->baseline, "run to compute speedups against (default: the first)");
  c->add_option("--stat", args->stat,
                "what the metric table shows per run: last (default), min, max, best (min of a loss or "
                "time, max of tok/s or MFU) or mean:K (mean of the last K values)");
  c->add_option("--group", args->group,
                "add a row per group of runs: seed (same config but the seed), tag (same first tag) or "
                "name:REGEX (the name's first capture group, e.g. 'name:(.*)-s[0-9]+')");
  c->callback([args] { compare(*args); });

  c = runs->add_subcommand("export", "Export runs at full resolution (all runs when no id is given)");
  db_opt(c);
  c->add_option("ids", args->ids, "run ids or uids");
  CLI::Option* format =
      c->add_option("--format", args->format,
                    "csv (run,step,metric,value), json, md, or tensorboard (a folder of event files, one run each)");
  c->add_option("--out", args->out, "file to write (atomically), or tensorboard's folder; default stdout");
  CLI::Option* to = c->add_option("--to", args->to,
                                  "log the runs to a tool's server instead: mlflow URL (its REST API; "
                                  "$MLFLOW_TRACKING_TOKEN is sent as a bearer token)")
                        ->expected(2);
  format->excludes(to);
  c->add_option("--experiment", args->experiment, "--to mlflow: the experiment, created when missing")
      ->capture_default_str();
  c->add_flag("--force", args->force, "replace an earlier export with the same extension (never the run store, "
                                      "a link or anything that is not a plain file)");
  c->add_option("--group", args->group,
                "md and json: add the groups and their verdicts against the first run's group (seed, tag, name:REGEX)");
  c->callback([args, format, to] {
    if (!format->count() && !to->count())
      throw Error("runs export needs --format (csv, json, md, tensorboard) or --to mlflow URL",
                  "e.g. `tokamak runs export 3 --format json --out run3.json`");
    do_export(*args);
  });

  c = runs->add_subcommand("import", "Import runs from a JSON export (same uids, new ids)");
  db_opt(c);
  c->add_option("file", args->file, "a file written by `tokamak runs export --format json`")->required();
  c->add_flag("--skip-existing", args->skip_existing, "skip runs whose uid is already there instead of failing");
  c->callback([args] { do_import(*args); });

  c = runs->add_subcommand("delete", "Delete a run and all its rows");
  db_opt(c);
  c->add_option("id", args->ids, "run id or uid")->required()->expected(1);
  c->add_flag("--force", args->force, "delete even a run that reads as running");
  c->callback([args] { do_delete(*args); });

  add_run_folder_commands(runs);

  c = runs->add_subcommand("tag", "Add or remove a run's tags, or set its notes");
  db_opt(c);
  c->add_option("id", args->ids, "run id or uid")->required()->expected(1);
  c->add_option("--add", args->add_tags, "tag to add (repeatable)");
  c->add_option("--remove", args->remove_tags, "tag to remove (repeatable)");
  c->add_option("--notes", args->notes, "replace the run's notes");
  c->callback([args] { tag(*args); });
}

}  // namespace tokamak::cli
