// CommandHost (see command_host.h).
#include "engine/fleet/remote/command_host.h"

#include "engine/base/util/error.h"

namespace tokamak {

ProcessResult CommandHost::run(const std::vector<std::string>& argv, const std::string& input, double timeout_s) const {
  if (!ssh_) return run_process(argv, input, timeout_s);
  ProcessResult r = run_process(ssh_argv(ssh_->first, ssh_->second, argv), input, timeout_s);
  if (r.code == 255) throw Error(describe_ssh_failure(ssh_->first, r.code, r.err, argv.at(0)));
  return r;
}

bool CommandHost::has_program(const std::string& program) const {
  return run({"sh", "-c", "command -v " + shell_quote(program) + " >/dev/null"}, {}, 30).code == 0;
}

}  // namespace tokamak
