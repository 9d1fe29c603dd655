// A Tokamak host reached over SSH: the few things the studio (ui/remote/) and the tests do with one, each an
// ssh command line of ssh_command.h run to its end (process.h). Following a run's journal is the one
// long-lived command; follow_argv() gives its argv for the caller's own process object, so a killed or lost
// connection is only a reader gone: the run goes on, and following again from the recorded offset
// (engine/base/store/journal_ingest.h) back-fills what was missed. Every failure is an Error of one line.
#pragma once
#include <string>
#include <vector>

#include "engine/base/data/dataset_list.h"
#include "engine/fleet/remote/ssh_command.h"

namespace tokamak {

// What "Test connection" shows.
struct HostReport {
  std::string version;                   // the host's `tokamak --version`
  std::vector<std::string> devices;      // one line each: GPUs (name, memory, use) or the CPU
  std::string free_disk;                 // "812 GB free in /home/me/.local/share"
  std::vector<DatasetListing> datasets;  // its `tokamak datasets --json`: paths are the host's
};

// A run started on a host, as `tokamak train --detach --json` described it.
struct RemoteRun {
  std::string uid, name, folder, state;
  long pid = 0;
  uint64_t journal_bytes = 0;
};

// A checkpoint of a run on a host, as `tokamak runs checkpoints UID` there lists it (the file exists).
struct RemoteCheckpoint {
  int64_t step = 0;
  std::string path;  // the host's path
  uint64_t bytes = 0;
};

class RemoteHost {
 public:
  // TOKAMAK: the host's tokamak command (a name on its PATH, or an absolute path).
  RemoteHost(SshTarget target, SshOptions options, std::string tokamak = "tokamak");

  const SshTarget& target() const { return target_; }
  const std::string& tokamak() const { return tokamak_; }
  // The same host and connection, running another tokamak command there (a fresh install's wrapper).
  RemoteHost with_tokamak(const std::string& tokamak) const { return RemoteHost(target_, options_, tokamak); }
  // "ssh:user@host:port": how the run store names where a run lives.
  std::string store_name() const { return "ssh:" + target_.spec(); }

  // Version, devices and free disk, or an Error saying why not (unreachable, refused key, changed host key,
  // Tokamak missing with how to install it, another version than this one).
  HostReport test_connection(double timeout_s = 30) const;
  // Starts a detached run from a config (JSON, sent on stdin: nothing is copied to the host beforehand).
  RemoteRun start_run(const std::string& config_json, const std::vector<std::string>& sets = {}) const;
  // The argv of `tokamak runs follow UID --from OFFSET` on the host.
  std::vector<std::string> follow_argv(const std::string& uid, uint64_t offset) const;
  // pause | resume | stop | sample.
  void control(const std::string& uid, const std::string& command) const;
  // The runs the host has, with their state (`tokamak runs list --json`); live_only: running or paused.
  std::vector<RemoteRun> runs(bool live_only) const;
  // The checkpoints of a run there that still exist, oldest first.
  std::vector<RemoteCheckpoint> checkpoints(const std::string& uid) const;
  // Ends the shared connection (ssh -O exit); harmless when there is none.
  void close() const;

  // Any command there (words, each quoted for the host's shell): its argv, for a process of the caller's,
  // or run to its end: its stdout, or an Error of one line (describe_ssh_failure).
  std::vector<std::string> argv(const std::vector<std::string>& command) const;
  std::string run(const std::vector<std::string>& command, const std::string& input = {}, double timeout_s = 60) const;

 private:
  SshTarget target_;
  SshOptions options_;
  std::string tokamak_;
};

}  // namespace tokamak
