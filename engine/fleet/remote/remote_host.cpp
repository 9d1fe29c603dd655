// RemoteHost (see remote_host.h).
#include "engine/fleet/remote/remote_host.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/base/util/error.h"
#include "engine/base/util/format.h"
#include "engine/base/util/process.h"
#include "engine/base/util/version.h"

namespace tokamak {

using json = nlohmann::json;

RemoteHost::RemoteHost(SshTarget target, SshOptions options, std::string tokamak)
    : target_(std::move(target)), options_(std::move(options)), tokamak_(std::move(tokamak)) {}

std::string RemoteHost::run(const std::vector<std::string>& command, const std::string& input, double timeout_s) const {
  ProcessResult r = run_process(ssh_argv(target_, options_, command), input, timeout_s);
  if (r.timed_out)
    throw Error("no answer from " + target_.spec() + " within " + std::to_string(static_cast<int>(timeout_s)) + " s",
                "check the network; the command was: " + command.front());
  if (r.code != 0) throw Error(describe_ssh_failure(target_, r.code, r.err, tokamak_));
  return r.out;
}

HostReport RemoteHost::test_connection(double timeout_s) const {
  // One round trip: the version (which also proves tokamak is there), its datasets, the devices, the free disk
  // where runs go.
  const std::string t = shell_quote(tokamak_);
  const std::string script =
      t + " --version || exit $?; echo '--'; " + t +
      " datasets --json 2>/dev/null; echo '--'; "
      "nvidia-smi --query-gpu=name,memory.total,memory.used,utilization.gpu --format=csv,noheader 2>/dev/null "
      "|| (grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/$/ (CPU)/'); echo '--'; "
      "d=\"${XDG_DATA_HOME:-$HOME/.local/share}\"; mkdir -p \"$d\"; df -Pk \"$d\" | tail -1; echo \"$d\"";
  const std::string out = run({"sh", "-c", script}, {}, timeout_s);
  std::istringstream in(out);
  std::string line;
  HostReport r;
  std::string version_line_there;
  int part = 0;
  std::vector<std::string> disk, datasets;
  while (std::getline(in, line)) {
    if (line == "--") {
      ++part;
      continue;
    }
    if (line.empty()) continue;
    if (part == 0) version_line_there = line;
    else if (part == 1) datasets.push_back(line);
    else if (part == 2) r.devices.push_back(line);
    else disk.push_back(line);
  }
  // Only the formats matter: builds that differ in the version's patch number read each other's journals and
  // configs, and a host's store is its own.
  const OtherBuild there = parse_version_line(version_line_there);
  r.version = there.version;
  const std::string differ = format_mismatch(there);
  if (there.version.empty() || !differ.empty())
    throw Error("Tokamak on " + target_.spec() + " is version " + (there.version.empty() ? "?" : there.version) +
                    ", this one is " + TOKAMAK_VERSION + (differ.empty() ? "" : ": " + differ),
                "install the same version there (docs/REMOTE.md), so both read the same journal and config");
  for (const std::string& l : datasets) {
    json j = json::parse(l, nullptr, false);
    if (j.is_object())
      r.datasets.push_back({j.value("name", ""), j.value("path", ""), j.value("kind", ""), j.value("description", ""),
                            j.value("tokens", uint64_t{0})});
  }
  if (disk.size() == 2) {
    std::istringstream df(disk[0]);
    std::string fs, size, used, avail;
    df >> fs >> size >> used >> avail;
    // df -Pk counts 1024-byte blocks.
    r.free_disk = format_bytes(std::atof(avail.c_str()) * 1024) + " free in " + disk[1];
  }
  return r;
}

RemoteRun RemoteHost::start_run(const std::string& config_json, const std::vector<std::string>& sets) const {
  std::vector<std::string> command = {tokamak_, "train", "--detach", "--json", "--config", "/dev/stdin"};
  for (const std::string& s : sets) command.push_back("--set"), command.push_back(s);
  const std::string out = run(command, config_json, 120);
  json j = json::parse(out, nullptr, false);
  if (!j.is_object() || !j.contains("run_uid"))
    throw Error("the host " + target_.spec() + " did not say which run it started",
                "is its Tokamak the same version as this one? Test the connection");
  return {j.value("run_uid", ""), j.value("name", ""), j.value("folder", ""), "running", j.value("pid", 0L), 0};
}

std::vector<std::string> RemoteHost::follow_argv(const std::string& uid, uint64_t offset) const {
  return ssh_argv(target_, options_, {tokamak_, "runs", "follow", uid, "--from", std::to_string(offset)});
}

void RemoteHost::control(const std::string& uid, const std::string& command) const {
  run({tokamak_, "runs", "control", uid, command}, {}, 30);
}

std::vector<RemoteRun> RemoteHost::runs(bool live_only) const {
  std::vector<std::string> command = {tokamak_, "runs", "list", "--json"};
  if (live_only) command.push_back("--live");
  std::istringstream in(run(command, {}, 30));
  std::vector<RemoteRun> runs;
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    runs.push_back({j.value("run_uid", ""), j.value("name", ""), j.value("folder", ""), j.value("state", ""),
                    j.value("pid", 0L), j.value("journal_bytes", uint64_t{0})});
  }
  return runs;
}

std::vector<RemoteCheckpoint> RemoteHost::checkpoints(const std::string& uid) const {
  std::istringstream in(run({tokamak_, "runs", "checkpoints", uid}, {}, 30));
  std::vector<RemoteCheckpoint> out;
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object()) out.push_back({j.value("step", int64_t{0}), j.value("path", ""), j.value("bytes", uint64_t{0})});
  }
  return out;
}

std::vector<std::string> RemoteHost::argv(const std::vector<std::string>& command) const {
  return ssh_argv(target_, options_, command);
}

void RemoteHost::close() const { run_process(ssh_close_argv(target_, options_), {}, 10); }

}  // namespace tokamak
