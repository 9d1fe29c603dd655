// cli_ssh_options (see ssh_args.h).
#include "app/tokamak/ssh_args.h"

#include <cstdlib>

#include "engine/base/util/files.h"

namespace tokamak::cli {

SshOptions cli_ssh_options(const std::string& identity, const std::string& known_hosts, const std::string& ssh_config) {
  SshOptions o;
  o.identity = identity, o.known_hosts = known_hosts, o.config_file = ssh_config;
  // $TOKAMAK_SSH_CONFIG: an ssh config of Tokamak's own instead of ~/.ssh/config (the studio lists its Hosts).
  if (o.config_file.empty() && std::getenv("TOKAMAK_SSH_CONFIG")) o.config_file = std::getenv("TOKAMAK_SSH_CONFIG");
  // One shared connection per host for every command of every run (ControlPath is a hash: %C).
  o.control_dir = cache_dir() + "/ssh";
  make_dirs(o.control_dir);
  return o;
}

}  // namespace tokamak::cli
