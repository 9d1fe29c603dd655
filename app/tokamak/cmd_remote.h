// What the `tokamak remote` subcommands share (cmd_remote.cpp: test, train, attach, list; cmd_remote_jobs.cpp:
// download, datasets, eval, export; cmd_remote_install.cpp: install, uninstall): their options and the host they name.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/fleet/remote/remote_host.h"

namespace CLI {
class App;
}

namespace tokamak::cli {

struct RemoteArgs {
  std::string host, tokamak = "tokamak", identity, known_hosts, ssh_config, db, config, uid;
  std::vector<std::string> sets;
  uint64_t from = 0;
  bool json = false, control = false, live = false;
  bool force = false;  // export: replace an earlier export on the host
  // download / eval / export
  std::string checkpoint, path, to, task, format, out, type;
  // install
  std::string torch_python, wheels;
};

// The host of --host with the shared connection (cache_dir()/ssh) and the ssh options given.
RemoteHost host_of(const RemoteArgs& a);

// Adds download, datasets, eval and export to `tokamak remote`; COMMON adds --host and the ssh options.
void add_remote_job_commands(CLI::App* remote, const std::shared_ptr<RemoteArgs>& args,
                             const std::function<void(CLI::App*)>& common);

// Adds install and uninstall (cmd_remote_install.cpp).
void add_remote_install_commands(CLI::App* remote, const std::shared_ptr<RemoteArgs>& args,
                                 const std::function<void(CLI::App*)>& common);

}  // namespace tokamak::cli
