// Run identity, run folder and detaching (see run_session.h).
#include "app/tokamak/run_session.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/device/device.h"
#include "engine/core/store/run_store.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/core/util/error.h"
#include "engine/core/util/files.h"

extern char** environ;

namespace tokamak::cli {

RunIdentity identify_run(const Config& config) {
  Config c = config;
  c.opt.precision = resolved_precision(c.opt.precision, c.device);  // the name says what is trained
  c.opt.layers = resolved_layers(c, c.opt.precision);
  RunIdentity id;
  id.name = c.name.empty() ? default_run_name(c) : c.name;
  const char* given = std::getenv("TOKAMAK_RUN_UID");
  // A queue's or Slurm's trial is named by its row: resuming it from another run's checkpoint is refused here,
  // before its folder or its store row exist.
  if (!c.train.resume.empty() && given && *given) check_checkpoint_owner(c.train.resume, given);
  id.uid = !c.train.resume.empty() ? read_checkpoint_info(c.train.resume).run_uid
           : given && *given       ? std::string(given)
                                   : new_run_uid();
  id.folder = RunFolder{run_folder_path(id.name, id.uid)};
  return id;
}

void open_run_folder(const RunIdentity& id) {
  const RunFolder& f = id.folder;
  const long owner = read_pid(f);
  if (owner > 0 && owner != ::getpid() && owner != ::getppid() && run_process_alive(f))
    throw Error("run " + id.uid + " (" + id.name + ") is still being trained by process " + std::to_string(owner) +
                    " on this machine",
                "stop that run first (`tokamak runs control " + id.uid + " stop`), then resume; or wait until it ends");
  if (path_exists(f.info_file())) {
    make_dirs(f.control_dir());
    return;
  }
  create_run_folder(f, {id.uid, id.name, this_host(), f.path, now_seconds()});
}

long start_detached(const RunIdentity& id, const std::string& config_json, const std::vector<std::string>& more) {
  const std::string config_path = id.folder.path + "/config.json";
  write_file_atomically(config_path, config_json);
  // Everything the child needs is built before fork(): between fork and exec only async-signal-safe calls.
  std::vector<std::string> args = {"tokamak-engine", "train", "--config", config_path};
  args.insert(args.end(), more.begin(), more.end());
  std::vector<std::string> env = {"TOKAMAK_RUN_UID=" + id.uid};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "TOKAMAK_RUN_UID=", 16) != 0) env.push_back(*e);
  std::vector<char*> argp, envp;
  for (auto& a : args) argp.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argp.push_back(nullptr), envp.push_back(nullptr);
  const std::string exe = "/proc/self/exe", log = id.folder.output_log();

  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start the detached run: ") + std::strerror(errno), "");
  if (pid == 0) {
    ::setsid();
    int in = ::open("/dev/null", O_RDONLY), out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) ::dup2(in, 0);
    if (out >= 0) ::dup2(out, 1), ::dup2(out, 2);
    ::execve(exe.c_str(), argp.data(), envp.data());
    const char msg[] = "tokamak: cannot start the detached run (exec failed)\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  // Written here too, so that a reader that comes at once already finds the owner (the child writes the same).
  write_pid_file(id.folder, pid);
  return pid;
}

}  // namespace tokamak::cli
