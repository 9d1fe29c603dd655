// CSV, JSON and Markdown export of runs, and JSON import.
#include "engine/base/store/run_export.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/run_groups.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/verdict.h"
#include "engine/base/util/error.h"
#include "engine/base/util/output_path.h"
#include "engine/base/util/files.h"

namespace tokamak {

using ojson = nlohmann::ordered_json;
// Model samples may hold bytes that are not UTF-8 (a token boundary inside a character): replace, not throw.
static std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

ExportFormat parse_export_format(const std::string& name) {
  if (name == "csv") return ExportFormat::csv;
  if (name == "json") return ExportFormat::json;
  if (name == "md" || name == "markdown") return ExportFormat::md;
  throw Error("unknown export format '" + name + "'", "use --format csv, json or md");
}

static ojson metric_value(const MetricValue& v) {
  if (v.integer) return static_cast<int64_t>(std::llround(v.value));
  return v.value;
}

static std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

static void export_csv(RunStore& store, const std::vector<int64_t>& ids, std::ostream& out) {
  out << "run,step,metric,value\n";
  for (int64_t id : ids) {
    std::string run = csv_field(store.run(id).uid);
    for (const MetricRow& r : store.metrics(id))
      for (const MetricValue& v : r.values)
        out << run << ',' << r.step << ',' << v.key << ',' << dump(metric_value(v)) << '\n';
  }
}

static ojson nullable(double v) { return v == 0 ? ojson(nullptr) : ojson(v); }

static ojson run_head(const RunInfo& r) {
  ojson j;
  j["uid"] = r.uid;
  j["name"] = r.name;
  j["status"] = r.status;
  j["created"] = r.created;
  j["updated"] = r.updated;
  j["heartbeat"] = nullable(r.heartbeat);
  j["ended"] = nullable(r.ended);
  j["dataset"] = r.dataset;
  j["model"] = r.model;
  j["n_params"] = r.n_params;
  j["device"] = r.device;
  j["gpu_name"] = r.gpu_name;
  j["world_size"] = r.world_size;
  if (!r.tokamak_version.empty()) j["tokamak_version"] = r.tokamak_version;  // absent: recorded before schema 8
  j["torch_version"] = r.torch_version;
  j["cuda_version"] = r.cuda_version;
  j["host"] = r.host;
  j["pid"] = r.pid;
  j["total_steps"] = r.total_steps;
  j["tokens_per_step"] = r.tokens_per_step;
  j["error"] = r.error;
  ojson tags = ojson::parse(r.tags_json, nullptr, false);
  j["tags"] = tags.is_discarded() ? ojson::array() : tags;
  j["notes"] = r.notes;
  // The config goes in as JSON when it is JSON (readable, diffable), else verbatim as a string.
  ojson config = r.config_json.empty() ? ojson(nullptr) : ojson::parse(r.config_json, nullptr, false);
  j["config"] = config.is_discarded() ? ojson(r.config_json) : config;
  return j;
}

// A profiled run's kinds against their floors, and the limits they were held against; a run that was not profiled
// has the limits its start stated and no kinds (absent for a run that has neither, as an older store's).
static ojson speed_of_light_json(const SpeedOfLightRecord& r) {
  ojson kinds = ojson::array();
  for (const KindFloorRow& k : r.kinds)
    kinds.push_back({{"kind", k.kind},
                     {"ms", k.ms},
                     {"calls", k.calls},
                     {"flops", k.flops},
                     {"bytes", k.bytes},
                     {"floor_ms", k.floor_ms},
                     {"bound", k.bound}});
  return {{"matmul_flops", r.matmul_flops},
          {"matmul_source", r.matmul_source},
          {"memory_bytes_per_s", r.memory_bytes_per_s},
          {"memory_source", r.memory_source},
          {"kinds", kinds}};
}

static SpeedOfLightRecord speed_of_light_from_json(const ojson& j) {
  SpeedOfLightRecord r;
  r.matmul_flops = j.value("matmul_flops", -1.0), r.memory_bytes_per_s = j.value("memory_bytes_per_s", -1.0);
  r.matmul_source = j.value("matmul_source", ""), r.memory_source = j.value("memory_source", "");
  for (const ojson& k : j.value("kinds", ojson::array()))
    r.kinds.push_back({k.at("kind").get<std::string>(), k.value("ms", 0.0), k.value("calls", 0.0),
                       k.value("flops", 0.0), k.value("bytes", 0.0), k.value("floor_ms", -1.0), k.value("bound", "")});
  return r;
}

static ojson verdict_json(const std::optional<Verdict>& v) {
  if (!v) return nullptr;
  return {{"test", "welch"},
          {"tested", v->tested},
          {"n_baseline", v->n_a},
          {"n", v->n_b},
          {"runs_baseline", v->total_a},
          {"runs", v->total_b},
          {"censored_baseline", v->censored_a},
          {"censored", v->censored_b},
          {"missing_baseline", missing_a(*v)},
          {"missing", missing_b(*v)},
          {"mean_baseline", v->mean_a},
          {"mean", v->mean_b},
          {"diff", v->diff},
          {"ci95_low", v->low},
          {"ci95_high", v->high},
          {"p", v->p},
          {"df", v->df},
          {"resolved", v->resolved},
          {"seeds_needed", v->seeds_needed}};
}

static ojson finite_or_null(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

// The groups of the runs (run_groups.h), each with its members' uids, its means and its verdicts against the
// baseline's group (the first run's), as `runs compare --group` prints them.
static ojson groups_json(RunStore& store, const std::vector<int64_t>& ids, const GroupSpec& group) {
  std::vector<ScoreInput> inputs;
  std::vector<GroupInput> members;
  std::vector<std::string> uids_of;
  for (int64_t id : ids) {
    const RunInfo run = store.run(id);
    inputs.push_back(score_input(store, id)), members.push_back(group_input(run)), uids_of.push_back(run.uid);
  }
  Scoreboard board = build_scoreboard(inputs, 0);
  add_group_rows(board, group_runs(members, group));
  ojson out = ojson::array();
  for (const ScoreGroup& g : board.groups) {
    ojson uids = ojson::array();
    for (size_t m : g.members) uids.push_back(uids_of[m]);
    out.push_back({{"label", g.label},
                   {"runs", uids},
                   {"holds_baseline", g.holds_baseline},
                   {"complete", g.complete},
                   {"tok_s", finite_or_null(g.mean.tok_s)},
                   {"tok_s_std", finite_or_null(g.tok_s_std)},
                   {"final_val_loss", finite_or_null(g.mean.final_val_loss)},
                   {"time_to_target_s", finite_or_null(g.mean.time_to_target_s)},
                   {"reached_target", g.reached},
                   {"verdicts",
                    {{"tok_s", verdict_json(g.tok_s_verdict)},
                     {"final_val_loss", verdict_json(g.val_loss_verdict)},
                     {"time_to_target_s", verdict_json(g.target_verdict)}}}});
    if (!g.no_verdict.empty()) out.back()["no_verdict"] = g.no_verdict;
  }
  for (const Scoreboard::SingleGroup& g : board.single_groups)
    out.push_back({{"label", g.label},
                   {"runs", ojson::array({uids_of[g.member]})},
                   {"no_verdict", "a group needs 2 runs or more"}});
  return out;
}

static void export_json(RunStore& store, const std::vector<int64_t>& ids, std::ostream& out, const GroupSpec& group) {
  // Streamed run by run, one metrics row per line: a million rows never sit in memory as one JSON tree.
  out << "{\"tokamak_export\":" << kExportVersion << ",\"runs\":[";
  for (size_t n = 0; n < ids.size(); ++n) {
    std::string head = dump(run_head(store.run(ids[n])));
    head.pop_back();  // the closing brace: metrics, samples and checkpoints follow
    out << (n ? ",\n" : "\n") << head << ",\"metrics\":[";
    bool first = true;
    for (const MetricRow& r : store.metrics(ids[n])) {
      ojson row;
      row["step"] = r.step;
      for (const MetricValue& v : r.values) row[v.key] = metric_value(v);
      out << (first ? "\n" : ",\n") << dump(row);
      first = false;
    }
    ojson samples = ojson::array(), checkpoints = ojson::array(), plays = ojson::array();
    for (const SampleRow& s : store.samples(ids[n]))
      samples.push_back({{"step", s.step}, {"prompt", s.prompt}, {"text", s.text}, {"created", s.created}});
    for (const PlayRow& p : store.plays(ids[n])) {
      const ojson options = ojson::parse(p.options_json, nullptr, false);
      plays.push_back({{"step", p.step},
                       {"prompt", p.prompt},
                       {"text", p.text},
                       {"options", options.is_discarded() ? ojson::object() : options},
                       {"created", p.created}});
    }
    for (const CheckpointRow& c : store.checkpoints(ids[n]))
      checkpoints.push_back({{"step", c.step}, {"path", c.path}, {"created", c.created}});
    out << "],\n\"samples\":" << dump(samples) << ",\n\"checkpoints\":" << dump(checkpoints);
    if (!plays.empty()) out << ",\n\"playground\":" << dump(plays);
    const SpeedOfLightRecord sol = store.speed_of_light(ids[n]);
    if (!sol.kinds.empty() || sol.has_limits()) out << ",\n\"speed_of_light\":" << dump(speed_of_light_json(sol));
    out << "}";
  }
  out << "\n]";
  if (group.by != GroupSpec::By::kNone) out << ",\n\"groups\":" << dump(groups_json(store, ids, group));
  out << "}\n";
}

void export_runs(RunStore& store, const std::vector<int64_t>& ids_in, ExportFormat format, std::ostream& out,
                 const GroupSpec& group) {
  std::vector<int64_t> ids = ids_in.empty() ? store.run_ids() : ids_in;
  switch (format) {
    case ExportFormat::csv:
      export_csv(store, ids, out);
      break;
    case ExportFormat::json:
      export_json(store, ids, out, group);
      break;
    case ExportFormat::md: {
      std::vector<ScoreInput> inputs;
      std::vector<GroupInput> members;
      for (int64_t id : ids) inputs.push_back(score_input(store, id)), members.push_back(group_input(store.run(id)));
      Scoreboard board = build_scoreboard(inputs, 0);
      if (group.by != GroupSpec::By::kNone) add_group_rows(board, group_runs(members, group));
      out << format_scoreboard_markdown(board);
      break;
    }
  }
}

// nlohmann's get<int64_t> turns a float into an integer with a plain cast, undefined behaviour when it is out
// of range (found by fuzz_import: a sample's step of 4.8e80); every integer field of an import comes through
// here instead, which takes integers and whole floats within range and refuses the rest (import_runs says so
// in one line, and nothing is imported).
struct NotAnInteger : std::runtime_error {
  using std::runtime_error::runtime_error;
};

static int64_t integer_of(const ojson& v, const char* key) {
  constexpr double kLimit = 9223372036854775808.0;  // 2^63
  if (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)) return v.get<int64_t>();
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= -kLimit && d < kLimit && d == std::trunc(d)) return static_cast<int64_t>(d);
  }
  throw NotAnInteger(std::string("\"") + key + "\": " + v.dump() + " is not a 64-bit integer");
}

static int64_t integer_value(const ojson& j, const char* key, int64_t fallback) {
  return j.contains(key) ? integer_of(j.at(key), key) : fallback;
}

static RunInfo run_from_json(const ojson& j) {
  RunInfo r;
  r.uid = j.at("uid").get<std::string>();
  if (r.uid.empty()) throw Error("a run in the export has an empty uid", "");
  r.name = j.value("name", "");
  r.status = j.value("status", "finished");
  r.created = j.value("created", 0.0);
  r.updated = j.value("updated", r.created);
  r.heartbeat = j.value("heartbeat", ojson()).is_null() ? 0 : j.at("heartbeat").get<double>();
  r.ended = j.value("ended", ojson()).is_null() ? 0 : j.at("ended").get<double>();
  r.dataset = j.value("dataset", "");
  r.model = j.value("model", "");
  r.n_params = integer_value(j, "n_params", 0);
  r.device = j.value("device", "");
  r.gpu_name = j.value("gpu_name", "");
  r.world_size = integer_value(j, "world_size", 1);
  r.tokamak_version = j.value("tokamak_version", "");
  r.torch_version = j.value("torch_version", "");
  r.cuda_version = j.value("cuda_version", "");
  r.host = j.value("host", "");
  r.pid = integer_value(j, "pid", 0);
  r.total_steps = integer_value(j, "total_steps", 0);
  r.tokens_per_step = integer_value(j, "tokens_per_step", 0);
  r.error = j.value("error", "");
  r.tags_json = dump(j.value("tags", ojson::array()));
  r.notes = j.value("notes", "");
  const ojson config = j.value("config", ojson());
  // An export of an older release names some keys as it did: stored under today's names (renamed_keys.h).
  r.config_json = upgrade_config_text(config.is_null()     ? ""
                                      : config.is_string() ? config.get<std::string>()
                                                           : dump(config));
  return r;
}

static void import_run(RunStore& store, int64_t id, const ojson& j) {
  std::vector<MetricRow> rows;
  for (const ojson& m : j.value("metrics", ojson::array())) {
    MetricRow r;
    r.step = integer_of(m.at("step"), "step");
    // Every numeric field but the step is a metric: metrics added after this export format still import.
    for (auto it = m.begin(); it != m.end(); ++it)
      if (it.key() != "step" && it.value().is_number())
        r.set(it.key(), it.value().get<double>(), it.value().is_number_integer());
    rows.push_back(r);
  }
  store.add_metrics(id, rows);
  for (const ojson& s : j.value("samples", ojson::array()))
    store.add_sample(
        id, {integer_of(s.at("step"), "step"), s.value("prompt", ""), s.value("text", ""), s.value("created", 0.0)});
  for (const ojson& c : j.value("checkpoints", ojson::array()))
    store.add_checkpoint(id, {integer_of(c.at("step"), "step"), c.value("path", ""), c.value("created", 0.0)});
  for (const ojson& p : j.value("playground", ojson::array()))
    store.add_play(id, {0, integer_of(p.at("step"), "step"), p.value("prompt", ""), p.value("text", ""),
                        dump(p.value("options", ojson::object())), p.value("created", 0.0)});
  if (j.contains("speed_of_light")) store.set_speed_of_light(id, speed_of_light_from_json(j.at("speed_of_light")));
}

void export_runs_to_file(RunStore& store, const std::vector<int64_t>& ids, ExportFormat format,
                         const std::string& path, const GroupSpec& group, bool replace) {
  const std::string extension = format == ExportFormat::csv ? ".csv" : format == ExportFormat::json ? ".json" : ".md";
  const OutputRule rule{"the " + extension.substr(1) + " export", {extension}, replace, {store.path()}};
  check_output_file(path, rule);
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error("cannot write '" + path + "'", "check that its folder exists and is writable");
    export_runs(store, ids, format, f, group);
    f.close();
    if (!f) throw Error("cannot write '" + path + "': disk full?", "free some space and try again");
  });
}

ImportResult import_runs(RunStore& store, const std::string& path, bool skip_existing) {
  const std::string hint = "import reads files written by `tokamak runs export --format json`";
  ojson doc = ojson::parse(read_file(path), nullptr, false);
  if (doc.is_discarded()) throw Error("'" + path + "' is not JSON", hint);
  if (!doc.is_object() || !doc.contains("tokamak_export") || !doc["tokamak_export"].is_number_integer())
    throw Error("'" + path + "' is not a Tokamak export (no \"tokamak_export\" version)", hint);
  int version = doc["tokamak_export"].get<int>();
  if (version > kExportVersion)
    throw Error("'" + path + "' was written by a newer Tokamak (export format " + std::to_string(version) +
                    ", this one knows " + std::to_string(kExportVersion) + ")",
                "update Tokamak to import it");
  ImportResult result;
  try {
    store.transaction([&] {
      for (const ojson& j : doc.value("runs", ojson::array())) {
        RunInfo run = run_from_json(j);
        if (int64_t existing = store.find_uid(run.uid)) {
          if (skip_existing) {
            result.skipped.push_back(run.uid);
            continue;
          }
          throw Error("run " + run.uid + " (\"" + run.name + "\") is already in " + store.path() + " as run " +
                          std::to_string(existing) + "; nothing was imported",
                      "delete it first (`tokamak runs delete " + std::to_string(existing) + " --db " + store.path() +
                          "`) or pass --skip-existing");
        }
        int64_t id = store.insert_run(run);
        import_run(store, id, j);
        result.imported.push_back(id);
      }
    });
  } catch (const ojson::exception& e) {
    throw Error("'" + path + "' is not a valid Tokamak export: " + e.what() + "; nothing was imported", hint);
  } catch (const NotAnInteger& e) {
    throw Error("'" + path + "' is not a valid Tokamak export: " + e.what() + "; nothing was imported", hint);
  }
  return result;
}

}  // namespace tokamak
