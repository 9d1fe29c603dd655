// `tokamak remote download` (and the other one-off jobs on a host's runs): what the studio runs as a child for
// a run that trains on an SSH host. Progress goes out as the `progress` events a run prints before its start
// (`{"event":"progress","what":..,"done":..,"total":..}`, at most one per whole percent) so the studio shows
// it as it shows a dataset being tokenized.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/tokamak/cmd_remote.h"
#include "app/tokamak/json_line.h"
#include "engine/base/config/eval_tasks.h"
#include "engine/fleet/remote/download.h"
#include "engine/fleet/remote/host_json.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"

namespace tokamak::cli {
namespace {

using json = nlohmann::json;

// The host's path of UID's checkpoint CHOICE: "" = the newest, a step number, or a file name or path of one.
std::string checkpoint_path(const RemoteHost& host, const std::string& uid, const std::string& choice) {
  const std::vector<RemoteCheckpoint> all = host.checkpoints(uid);
  if (all.empty())
    throw Error("run " + uid + " on " + host.target().spec() + " has no checkpoint yet",
                "wait for one (checkpoint.every), or stop the run: Stop writes one");
  if (choice.empty()) return all.back().path;
  std::string steps;
  for (const RemoteCheckpoint& c : all) {
    const std::string file = c.path.substr(c.path.rfind('/') + 1);
    if (choice == std::to_string(c.step) || choice == c.path || choice == file) return c.path;
    steps += (steps.empty() ? "" : ", ") + std::to_string(c.step);
  }
  throw Error("run " + uid + " on " + host.target().spec() + " has no checkpoint '" + choice + "'",
              "its checkpoints are at steps " + steps + " (give a step, or leave it out for the newest)");
}

void download(const RemoteArgs& a) {
  const RemoteHost host = host_of(a);
  if (a.uid.empty() == a.path.empty())
    throw Error("say what to download: a run's UID [CHECKPOINT], or --path PATH on the host", "not both");
  const std::string remote = a.path.empty() ? checkpoint_path(host, a.uid, a.checkpoint) : a.path;
  std::string name = remote;
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  const std::string what = "downloading " + name.substr(name.rfind('/') + 1);
  int shown = -1;
  const DownloadResult r = download_from_host(host, remote, a.to, [&](uint64_t done, uint64_t total) {
    const int percent = total ? static_cast<int>(100 * done / total) : 100;
    if (percent != shown) {
      shown = percent;
      if (a.json) emit_json_line({{"event", "progress"}, {"what", what}, {"done", done}, {"total", total}});
      else if (percent % 10 == 0) std::fprintf(stderr, "%s: %d%%\n", what.c_str(), percent);
    }
    return true;
  });
  json files = json::array();
  for (const RemoteFileInfo& f : r.files) files.push_back({{"name", f.name}, {"bytes", f.bytes}, {"sha256", f.sha256}});
  if (a.json) {
    emit_json_line({{"event", "downloaded"},
                    {"path", r.path},
                    {"remote", remote},
                    {"bytes", r.bytes},
                    {"fetched", r.fetched},
                    {"resumed_from", r.resumed_from},
                    {"refetched", r.refetched},
                    {"already_here", r.already_here},
                    {"files", files}});
    return;
  }
  std::printf("%s\n", r.path.c_str());
  std::fprintf(stderr, "%s %s:%s → %s (%llu bytes, sha256 verified%s)\n",
               r.already_here ? "already here:" : "downloaded", host.target().spec().c_str(), remote.c_str(),
               r.path.c_str(), static_cast<unsigned long long>(r.bytes),
               r.resumed_from ? (", resumed at " + std::to_string(r.resumed_from) + " bytes").c_str() : "");
}

// `tokamak eval` on the host's checkpoint (the task's path is the host's), its results recorded here as a local
// evaluation records them: eval/... metrics of the run at the checkpoint's step (record_evaluation's rows).
void eval(const RemoteArgs& a) {
  const RemoteHost host = host_of(a);
  const EvalTaskSpec spec = parse_eval_task(a.task);  // a bad spec is refused before anything runs there
  const std::string checkpoint = checkpoint_path(host, a.uid, a.checkpoint);
  const std::string out =
      host.run({host.tokamak(), "eval", "--json", "--checkpoint", checkpoint, "--task", a.task}, {}, 0);
  json r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);)
    if (json j = json::parse(line, nullptr, false); j.is_object()) r = j;
  if (!r.is_object() || !r.contains("step"))
    throw Error("`tokamak eval` on " + host.target().spec() + " gave no result", "is its Tokamak this version?");
  MetricRow row;
  row.step = host_field<int64_t>(r, "step", host.target().spec());
  for (const auto& [key, value] : r.items())
    if (value.is_number() && key != "step")
      row.set(eval_metric_key(spec, key), value.get<double>(), value.is_number_integer());
  bool recorded = false;
  {
    RunStore store(a.db);
    if (const int64_t run = store.find_uid(a.uid); run != 0 && !row.values.empty()) {
      store.transaction([&] { store.add_metrics(run, {row}); });
      recorded = true;
    }
  }
  r["recorded"] = recorded;
  r["host"] = host.target().spec();
  if (a.json) return emit_json_line(r);
  for (const MetricValue& v : row.values) std::printf("%s %g\n", v.key.c_str(), v.value);
  std::fprintf(stderr, "%s\n",
               recorded ? ("recorded as metrics of run " + a.uid + " at step " + std::to_string(row.step)).c_str()
                        : ("not recorded: run " + a.uid + " is not in this machine's run store").c_str());
}

// `tokamak export` on the host: the folder (hf) or file (gguf) is written there (fetch it with `download --path`).
void export_model(const RemoteArgs& a) {
  if (!a.type.empty() && a.format != "gguf")
    throw Error("--type is GGUF's (f32, f16, bf16, q8_0)", "add --format gguf, or drop --type");
  const RemoteHost host = host_of(a);
  const std::string checkpoint = checkpoint_path(host, a.uid, a.checkpoint);
  std::vector<std::string> cmd = {host.tokamak(), "export",   "--format", a.format,
                                  "--checkpoint", checkpoint, "--out",    a.out};
  if (!a.type.empty()) cmd.insert(cmd.end(), {"--type", a.type});
  if (a.force) cmd.push_back("--force");
  host.run(cmd, {}, 0);
  const json r = {{"event", "exported"}, {"host", host.target().spec()}, {"checkpoint", checkpoint}, {"path", a.out}};
  if (a.json) emit_json_line(r);
  else std::printf("%s:%s\n", host.target().spec().c_str(), a.out.c_str());
}

}  // namespace

void add_remote_job_commands(CLI::App* remote, const std::shared_ptr<RemoteArgs>& args,
                             const std::function<void(CLI::App*)>& common) {
  CLI::App* c = remote->add_subcommand(
      "download", "Copy a run's checkpoint (or --path FILE|FOLDER) from the host, resumable, checked by sha256");
  common(c);
  c->add_option("uid", args->uid, "the run's uid on the host");
  c->add_option("checkpoint", args->checkpoint, "its step or file name (default: the newest checkpoint)");
  c->add_option("--path", args->path, "a file or folder on the host instead (an export, say)");
  c->add_option("--to", args->to, "the folder here to put it in")->required();
  c->add_flag("--json", args->json, "progress and the result as JSON lines on stdout");
  c->callback([args] { download(*args); });

  c = remote->add_subcommand("eval", "Evaluate a run's checkpoint on the host; record the results here too");
  common(c);
  c->add_option("uid", args->uid, "the run's uid on the host")->required();
  c->add_option("checkpoint", args->checkpoint, "its step or file name (default: the newest checkpoint)");
  c->add_option("--task", args->task, "hellaswag:FILE.jsonl | ppl:PATH (paths on the host)")->required();
  c->add_option("--db", args->db, "this machine's run store (default: $XDG_DATA_HOME/tokamak/runs.db)");
  c->add_flag("--json", args->json, "the result as one JSON object (default: one line per result)");
  c->callback([args] { eval(*args); });

  c = remote->add_subcommand("export", "Write a run's checkpoint as a Hugging Face folder or a GGUF file on the host");
  common(c);
  c->add_option("uid", args->uid, "the run's uid on the host")->required();
  c->add_option("checkpoint", args->checkpoint, "its step or file name (default: the newest checkpoint)");
  c->add_option("--format", args->format, "hf (Hugging Face GPT-2 folder) | gguf (one file for llama.cpp and Ollama)")
      ->default_val("hf");
  c->add_option("--type", args->type, "gguf's weights: f32 | f16 | bf16 | q8_0 (default f16)");
  c->add_option("--out", args->out, "the folder (hf) or file (gguf) to write, on the host")->required();
  c->add_flag("--force", args->force, "replace an earlier export there (never a checkpoint, a store or a link)");
  c->add_flag("--json", args->json, "the result as one JSON object");
  c->callback([args] { export_model(*args); });
}

}  // namespace tokamak::cli
