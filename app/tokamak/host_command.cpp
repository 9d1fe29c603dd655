// run_on_host (see host_command.h).
#include "app/tokamak/host_command.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/tokamak/ssh_args.h"
#include "engine/fleet/remote/command_host.h"
#include "engine/base/util/error.h"

namespace tokamak::cli {

void add_host_options(CLI::App* c, HostArgs& h, bool with_tokamak) {
  c->add_option("--host", h.host,
                "run it on an SSH host, against its own run store and queue worker (a Host of ~/.ssh/config, or "
                "user@host[:port])");
  if (with_tokamak)
    c->add_option("--tokamak", h.tokamak, "with --host: the tokamak command there (default: tokamak on its PATH)");
  c->add_option("--identity", h.identity, "with --host: ssh key to log in with (default: ssh's own choice and agent)");
  c->add_option("--known-hosts", h.known_hosts, "with --host: known_hosts file (default: ssh's)");
  c->add_option("--ssh-config", h.ssh_config,
                "with --host: ssh config file (default: $TOKAMAK_SSH_CONFIG, else ~/.ssh/config)");
}

void run_on_host(const HostArgs& h, const std::vector<std::string>& args, const std::string& input,
                 const std::string& source_name) {
  const SshTarget target = parse_ssh_target(h.host);
  const CommandHost host(target, cli_ssh_options(h.identity, h.known_hosts, h.ssh_config));
  std::vector<std::string> argv = {h.command()};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProcessResult r = host.run(argv, input, 300);  // ssh's own failure (255) throws its one line
  if (r.timed_out)
    throw Error("no answer from " + target.spec() + " within 300 s",
                "check the network; the command was: tokamak " + (args.empty() ? "" : args.front()));
  if (r.code != 0) {
    // "tokamak: why (hint: fix)" as the host's tokamak printed it, without the prefix our own line adds.
    std::string why = describe_ssh_failure(target, r.code, r.err, h.command());
    if (why.rfind("tokamak: ", 0) == 0) why.erase(0, 9);
    if (!source_name.empty() && why.rfind("/dev/stdin", 0) == 0) why.replace(0, 10, source_name);
    throw Error(why);
  }
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  std::fwrite(r.err.data(), 1, r.err.size(), stderr);
  std::fflush(stdout);
}

}  // namespace tokamak::cli
