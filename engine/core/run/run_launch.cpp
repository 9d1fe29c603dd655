// launch_detached (see run_launch.h).
#include "engine/core/run/run_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/core/util/error.h"

extern char** environ;

namespace tokamak {

std::string engine_beside_self() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tokamak-engine") : (self.parent_path() / "tokamak-engine").string();
}

int gpus_here() {
  int n = 0;
  while (::access(("/dev/nvidia" + std::to_string(n)).c_str(), F_OK) == 0) ++n;
  return n;
}

std::vector<std::string> child_environment(const char* const* base, const std::string& uid,
                                           const std::vector<std::string>& more) {
  std::vector<std::string> set = {"TOKAMAK_RUN_UID=" + uid};
  set.insert(set.end(), more.begin(), more.end());
  auto key = [](const std::string& kv) { return kv.substr(0, kv.find('=') + 1); };
  std::vector<std::string> env;
  for (const char* const* e = base; e && *e; ++e) {
    const std::string kv = *e;
    if (std::none_of(set.begin(), set.end(), [&](const std::string& s) { return key(s) == key(kv); }))
      env.push_back(kv);
  }
  env.insert(env.end(), set.begin(), set.end());
  return env;
}

long launch_detached(const std::string& engine, const std::vector<std::string>& args, const RunFolder& folder,
                     const std::string& uid, const std::vector<std::string>& more_env) {
  std::vector<std::string> argv = {engine};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = child_environment(environ, uid, more_env);
  std::vector<char*> argp, envp;
  for (auto& a : argv) argp.push_back(a.data());
  for (auto& e : env) envp.push_back(e.data());
  argp.push_back(nullptr), envp.push_back(nullptr);
  const std::string log = folder.output_log();
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("cannot start the run: ") + std::strerror(errno), "");
  if (pid == 0) {
    // Until the pid file is written this child dies with its starter: a starter killed before that point
    // leaves nothing running, and its successor starts the run (the same uid) again.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::setsid();
    int in = ::open("/dev/null", O_RDONLY), out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (in >= 0) ::dup2(in, 0);
    if (out >= 0) ::dup2(out, 1), ::dup2(out, 2);
    try {
      write_pid_file(folder, ::getpid());
    } catch (...) {
      ::_exit(1);
    }
    ::prctl(PR_SET_PDEATHSIG, 0);
    ::execve(engine.c_str(), argp.data(), envp.data());
    const char msg[] = "tokamak: cannot start the run (exec of tokamak-engine failed)\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  return pid;
}

}  // namespace tokamak
