// The ssh options of the commands that reach a host (`tokamak remote ...`, `tokamak slurm ... --host`):
// the user's choices, plus what the CLI always adds ($TOKAMAK_SSH_CONFIG, one shared connection per host).
#pragma once
#include <string>

#include "engine/fleet/remote/ssh_command.h"

namespace tokamak::cli {

// IDENTITY, KNOWN_HOSTS, SSH_CONFIG: "" = ssh's own choice. The ControlMaster socket lives in cache_dir()/ssh.
SshOptions cli_ssh_options(const std::string& identity, const std::string& known_hosts, const std::string& ssh_config);

}  // namespace tokamak::cli
