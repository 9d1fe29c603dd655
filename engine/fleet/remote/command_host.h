// Where a command runs: this computer, or a host over ssh (a cluster's login node). The Slurm client
// (slurm_client.h) runs sbatch, squeue, scontrol and scancel through it, so the CLI and the studio use a
// cluster the same way whether they sit on its login node or on a laptop that reaches it with ssh.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/fleet/remote/ssh_command.h"
#include "engine/base/util/process.h"

namespace tokamak {

class CommandHost {
 public:
  CommandHost() = default;  // this computer
  CommandHost(SshTarget target, SshOptions options) : ssh_(std::make_pair(std::move(target), std::move(options))) {}

  bool local() const { return !ssh_; }
  // "this computer" or user@host:port, for messages.
  std::string name() const { return ssh_ ? ssh_->first.spec() : "this computer"; }
  // "local" or "ssh:user@host:port": the key of what is remembered per host.
  std::string key() const { return ssh_ ? "ssh:" + ssh_->first.spec() : "local"; }

  // Runs ARGV there (over ssh: as one quoted command line) to its end. An ssh failure (exit 255) throws an
  // Error with describe_ssh_failure's line; the command's own failure is the caller's to read.
  ProcessResult run(const std::vector<std::string>& argv, const std::string& input = {}, double timeout_s = 60) const;
  // True when PROGRAM is on that host's PATH (`command -v`).
  bool has_program(const std::string& program) const;

 private:
  std::optional<std::pair<SshTarget, SshOptions>> ssh_;
};

}  // namespace tokamak
