// `tokamak datasets get NAME [--shards N | --tokens 2B] [--json] [--host H]`: fetches a catalog dataset (or
// hf:OWNER/REPO[:GLOB]) from the Hugging Face Hub into the data folder (engine/fleet/hub/hub_fetch.h), where
// `tokamak datasets` lists it and data.path=NAME trains on it. Progress goes to stderr (a bar on a terminal,
// a line every 10% otherwise), or with --json as `progress` events on stdout, at most one per whole percent,
// then one `dataset` event. --host runs the same command on an SSH host, which fetches from the Hub itself
// (never through this machine), and prints its progress here.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/tokamak/cmd_datasets.h"
#include "app/tokamak/cmd_remote.h"
#include "app/tokamak/json_line.h"
#include "engine/fleet/hub/hub_fetch.h"
#include "engine/fleet/hub/hub_files.h"
#include "engine/fleet/hub/hub_status.h"
#include "engine/fleet/remote/host_json.h"
#include "engine/base/util/error.h"
#include "engine/base/util/format.h"
#include "engine/base/util/process.h"

namespace tokamak::cli {
namespace {

using json = nlohmann::json;

struct GetArgs {
  std::string name, tokens;
  int64_t shards = -1;
  bool json = false;
  RemoteArgs remote;  // --host and its ssh options
};

// Prints progress as the command line shows it: JSON events, a bar on a terminal, or a line every 10%.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool as_json) : json_(as_json), tty_(::isatty(2)) {}
  void show(const FetchProgress& p) {
    const int percent = p.total ? static_cast<int>(100 * p.done / p.total) : 0;
    const bool all_in = p.files_done == p.files && !all_shown_;  // the last line says every file is in
    if (percent == shown_ && !(tty_ && !json_) && !(all_in && !json_)) return;
    const double rate = p.seconds > 0 ? static_cast<double>(p.fetched) / p.seconds : 0;
    const double eta = rate > 0 && p.total > p.done ? static_cast<double>(p.total - p.done) / rate : 0;
    if (json_) {
      shown_ = percent;
      emit_json_line({{"event", "progress"},
                      {"what", "downloading " + p.dataset},
                      {"done", p.done},
                      {"total", p.total},
                      {"fetched", p.fetched},
                      {"bytes_per_s", rate},
                      {"eta_s", eta},
                      {"files_done", p.files_done},
                      {"files", p.files}});
      return;
    }
    char line[200];
    std::snprintf(line, sizeof line, "%s: %s of %s (%d%%), %d/%d files, %.1f MB/s, ETA %s", p.dataset.c_str(),
                  format_bytes(p.done).c_str(), format_bytes(p.total).c_str(), percent, p.files_done, p.files,
                  rate / 1e6, format_duration(eta).c_str());
    if (tty_) {
      std::fprintf(stderr, "\r%-100s", line);
      bar_ = true;
    } else if (percent / 10 != shown_ / 10 || shown_ < 0 || all_in) {
      std::fprintf(stderr, "%s\n", line);
    }
    shown_ = percent, all_shown_ = all_shown_ || all_in;
  }
  void end() {
    if (bar_) std::fprintf(stderr, "\n"), bar_ = false;
  }

 private:
  bool json_, tty_, bar_ = false, all_shown_ = false;
  int shown_ = -1;
};

json result_event(const FetchResult& r) {
  return {{"event", "dataset"},
          {"name", r.name},
          {"repo", r.repo},
          {"path", r.dir},
          {"files", r.files.size()},
          {"bytes", r.bytes},
          {"tokens", r.tokens},
          {"fetched", r.fetched},
          {"resumed_from", r.resumed_from},
          {"already_here", r.already_here},
          {"refetched", r.refetched}};
}

// `host` names the machine whose tokamak printed `r` (a host may run another version).
void print_result(const json& r, bool as_json, const std::string& where, const std::string& host) {
  if (as_json) return emit_json_line(r);
  const auto path = host_field<std::string>(r, "path", host), name = host_field<std::string>(r, "name", host);
  const auto files = host_field<uint64_t>(r, "files", host), bytes = host_field<uint64_t>(r, "bytes", host);
  const auto tokens = host_field<uint64_t>(r, "tokens", host), fetched = host_field<uint64_t>(r, "fetched", host);
  const auto already = host_field<int64_t>(r, "already_here", host);
  std::printf("%s%s\n", where.c_str(), path.c_str());
  std::fprintf(stderr, "%s: %llu files, %s, %llu tokens in %s%s (fetched %s%s)\n", name.c_str(),
               static_cast<unsigned long long>(files), format_bytes(bytes).c_str(),
               static_cast<unsigned long long>(tokens), where.c_str(), path.c_str(), format_bytes(fetched).c_str(),
               already ? (", " + std::to_string(already) + " already here").c_str() : "");
}

void get_here(const GetArgs& a) {
  const HubSelection s = select_hub_dataset(a.name, a.shards, a.tokens.empty() ? 0 : parse_token_amount(a.tokens));
  ProgressPrinter printer(a.json);
  FetchOptions o;
  o.progress = [&](const FetchProgress& p) { return printer.show(p), true; };
  FetchResult r;
  try {
    r = fetch_hub_dataset(s, o);
  } catch (...) {
    printer.end();
    throw;
  }
  printer.end();
  print_result(result_event(r), a.json, "", "this machine");
}

// The same command on the host, its JSON lines read here as they come.
void get_on_host(const GetArgs& a) {
  // The checks of a get here, before anything reaches the host (a --shards 0 that was dropped on the way made
  // the host fetch everything).
  (void)select_hub_dataset(a.name, a.shards, a.tokens.empty() ? 0 : parse_token_amount(a.tokens));
  const RemoteHost host = host_of(a.remote);
  std::vector<std::string> cmd = {host.tokamak(), "datasets", "get", a.name, "--json"};
  if (a.shards != -1) cmd.insert(cmd.end(), {"--shards", std::to_string(a.shards)});
  if (!a.tokens.empty()) cmd.insert(cmd.end(), {"--tokens", a.tokens});
  ProgressPrinter printer(a.json);
  std::string pending;
  json result;
  const ProcessResult p = stream_process(host.argv(cmd), [&](const char* data, size_t n) {
    pending.append(data, n);
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1)) {
      const json j = json::parse(pending.substr(0, eol), nullptr, false);
      if (!j.is_object()) continue;
      if (j.value("event", "") == "dataset") result = j;
      if (j.value("event", "") != "progress") continue;
      FetchProgress fp;
      double rate = 0;
      try {  // a progress line only informs: one this version cannot read is passed over
        fp.dataset = a.name, fp.done = j.value("done", uint64_t{0}), fp.total = j.value("total", uint64_t{0});
        fp.fetched = j.value("fetched", uint64_t{0}), fp.files_done = j.value("files_done", 0);
        fp.files = j.value("files", 0);
        rate = j.value("bytes_per_s", 0.0);
      } catch (const json::exception&) {
        continue;
      }
      fp.seconds = rate > 0 ? static_cast<double>(fp.fetched) / rate : 0;
      printer.show(fp);
    }
    return true;
  });
  printer.end();
  if (p.code != 0) {
    const std::string why = describe_ssh_failure(host.target(), p.code, p.err, host.tokamak());
    throw Error(why.rfind("tokamak: ", 0) == 0 ? why.substr(9) + " (on " + host.target().spec() + ")" : why);
  }
  if (!result.is_object())
    throw Error("`tokamak datasets get` on " + host.target().spec() + " gave no result",
                "is its Tokamak this version?");
  print_result(result, a.json, a.json ? "" : host.target().spec() + ":", host.target().spec());
}

// `datasets catalog`: what the catalog offers and how much of each this machine has.
void catalog(bool as_json) {
  for (const HubCatalogStatus& s : hub_catalog_status()) {
    const HubCatalogEntry& e = s.entry;
    const uint64_t bytes = (static_cast<uint64_t>(e.train_shards) + 1) * s.shard_bytes();
    if (as_json) {
      emit_json_line({{"name", e.name},
                      {"repo", e.repo},
                      {"about", e.about},
                      {"path", s.dir},
                      {"train_shards", e.train_shards},
                      {"shard_tokens", e.shard_tokens},
                      {"shard_bytes", s.shard_bytes()},
                      {"bytes", bytes},
                      {"val_present", s.val_present},
                      {"train_present", s.train_present},
                      {"partial", s.partial},
                      {"bytes_present", s.bytes_present}});
      continue;
    }
    std::printf("%-18s %s: %d of %d train shards here%s%s (%s of about %s)\n    %s\n", e.name.c_str(), e.repo.c_str(),
                s.train_present, e.train_shards, s.val_present ? " + val" : "",
                s.partial ? (", " + std::to_string(s.partial) + " partial").c_str() : "",
                format_bytes(s.bytes_present).c_str(), format_bytes(bytes).c_str(), e.about.c_str());
  }
}

}  // namespace

void add_datasets_get_command(CLI::App* datasets) {
  auto catalog_json = std::make_shared<bool>(false);
  CLI::App* cat = datasets->add_subcommand(
      "catalog", "The datasets `datasets get` knows, and how many of their shards this machine has");
  cat->add_flag("--json", *catalog_json, "one JSON object per dataset");
  cat->callback([catalog_json] { catalog(*catalog_json); });

  auto a = std::make_shared<GetArgs>();
  CLI::App* c = datasets->add_subcommand(
      "get",
      "Fetch a dataset of token shards from the Hugging Face Hub (docs/DATASETS.md): fineweb10B, "
      "finewebedu10B, fineweb-edu-100B, or hf:OWNER/REPO[:GLOB]; resumable, every file checked");
  c->add_option("name", a->name, "fineweb10B | finewebedu10B | fineweb-edu-100B | hf:OWNER/REPO[:GLOB]")->required();
  auto* shards = c->add_option("--shards", a->shards, "only the first N train shards (the val shard comes too)");
  c->add_option("--tokens", a->tokens, "only as many train shards as hold this many tokens: 500M, 2B")
      ->excludes(shards);
  c->add_flag("--json", a->json, "progress events and the result as JSON lines on stdout");
  c->add_option("--host", a->remote.host,
                "fetch on this SSH host instead (a Host of ~/.ssh/config, or user@host[:port])");
  c->add_option("--tokamak", a->remote.tokamak,
                "with --host: the tokamak command there (default: tokamak on its PATH)");
  c->add_option("--identity", a->remote.identity, "with --host: ssh key to log in with");
  c->add_option("--known-hosts", a->remote.known_hosts, "with --host: known_hosts file (default: ssh's)");
  c->add_option("--ssh-config", a->remote.ssh_config,
                "with --host: ssh config file (default: $TOKAMAK_SSH_CONFIG, else ~/.ssh/config)");
  c->callback([a] { a->remote.host.empty() ? get_here(*a) : get_on_host(*a); });
}

}  // namespace tokamak::cli
