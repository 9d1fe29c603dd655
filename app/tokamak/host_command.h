// `--host H` on the queue and sweep commands: the same command run by the host's own tokamak over ssh, against
// the host's run store and queue worker (docs/SWEEPS.md, "The queue of a host"). Nothing of the queue lives here:
// the host's worker is a session of its own there, so its queue goes on when this machine sleeps or the
// connection drops. A file the command reads (a config, a sweep file) travels on ssh's stdin, as
// `tokamak remote train` sends its config.
#pragma once
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tokamak::cli {

struct HostArgs {
  std::string host, tokamak, identity, known_hosts, ssh_config;
  bool given() const { return !host.empty(); }
  // The host's tokamak command: --tokamak, else `tokamak` on its PATH.
  std::string command() const { return tokamak.empty() ? std::string("tokamak") : tokamak; }
};

// --host, --identity, --known-hosts, --ssh-config, and (WITH_TOKAMAK) --tokamak, bound to H.
void add_host_options(CLI::App* command, HostArgs& h, bool with_tokamak = true);

// Runs `TOKAMAK ARGS...` on the host with INPUT on its stdin. Its stdout becomes ours unchanged (the same
// text or JSON the command prints here) and its stderr ours; a failure — unreachable, refused, no tokamak
// there, or the command's own error — is an Error of one line. SOURCE_NAME replaces "/dev/stdin" in the
// host's error line (a sweep file's problems name the file as it is called here).
void run_on_host(const HostArgs& h, const std::vector<std::string>& args, const std::string& input = {},
                 const std::string& source_name = {});

}  // namespace tokamak::cli
