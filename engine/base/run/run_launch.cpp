// launch_detached (see run_launch.h).
#include "engine/base/run/run_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/host.h"

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

namespace {

void close_launch_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The forked child: waits for the starter's go (the pid file is written), then becomes the engine.
[[noreturn]] void exec_run(int go[2], int exec[2], pid_t parent, const std::string& log, const std::string& engine,
                           char* const* argp, char* const* envp) {
  // The starter's ends are not this child's: holding go[1] open, it would never read the end of go when the
  // starter gives up (a pid file that cannot be written), and both would wait for good.
  close_launch_fd(go[1]), close_launch_fd(exec[0]);
  // Until the pid file is written this child dies with its starter: a starter killed before that point
  // leaves nothing running, and its successor starts the run (the same uid) again.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  ::setsid();
  // The caller's signal handling is not the run's (a GUI's handlers, a thread's blocked signals).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  int in = ::open("/dev/null", O_RDONLY), out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (in >= 0) ::dup2(in, 0);
  if (out >= 0) ::dup2(out, 1), ::dup2(out, 2);
  char ok = 0;
  ssize_t n;
  while ((n = ::read(go[0], &ok, 1)) < 0 && errno == EINTR) {}
  if (n != 1) ::_exit(1);  // the starter died, or could not write the pid file
  ::prctl(PR_SET_PDEATHSIG, 0);
  // Descriptors the caller opened without O_CLOEXEC (a store, a window's sockets) are not the run's.
#ifdef SYS_close_range
  ::syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
#endif
  ::execve(engine.c_str(), argp, envp);
  const int e = errno;
  (void)!::write(exec[1], &e, sizeof e);
  const char msg[] = "tokamak: cannot start the run (exec of tokamak-engine failed)\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(127);
}

}  // namespace

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
  // go: the pid file is written, exec now (a socket: sent with MSG_NOSIGNAL, a child already gone is no
  // SIGPIPE here); exec: closed by a successful exec, else the child's errno.
  int go[2] = {-1, -1}, exec[2] = {-1, -1};
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0 || ::pipe2(exec, O_CLOEXEC) != 0) {
    const int e = errno;
    close_launch_fd(go[0]), close_launch_fd(go[1]), close_launch_fd(exec[0]), close_launch_fd(exec[1]);
    throw Error(std::string("cannot start the run: ") + std::strerror(e), "");
  }

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    close_launch_fd(go[0]), close_launch_fd(go[1]), close_launch_fd(exec[0]), close_launch_fd(exec[1]);
    throw Error(std::string("cannot start the run: ") + std::strerror(e), "");
  }
  if (pid == 0) exec_run(go, exec, parent, log, engine, argp.data(), envp.data());
  close_launch_fd(go[0]), close_launch_fd(exec[1]);
  try {
    begin_run_segment(folder, pid);
  } catch (...) {
    close_launch_fd(go[1]), close_launch_fd(exec[0]);  // the child reads the end of go and exits
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  (void)!::send(go[1], "x", 1, MSG_NOSIGNAL);
  close_launch_fd(go[1]);
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(exec[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {}
  close_launch_fd(exec[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    ::waitpid(pid, nullptr, 0);
    throw Error("cannot start the run: " + engine + ": " + std::strerror(exec_errno),
                "rebuild with scripts/build.sh or reinstall: tokamak-engine belongs beside tokamak");
  }
  return pid;
}

long start_run_detached(const std::string& engine, const RunFolder& folder, const std::string& uid,
                        const std::string& name, const std::string& config_json, const std::vector<std::string>& args,
                        const std::vector<std::string>& env) {
  // A start that fails (a full disk under the pid file or the config, an engine that does not exec) leaves no
  // half-made run behind: a folder that was not there before goes again. A resumed run's folder stays as it was.
  const bool made = !path_exists(folder.info_file()), fresh = !path_exists(folder.path);
  try {
    if (made) create_run_folder(folder, {uid, name, this_host(), folder.path, now_seconds()});
    const std::string config = folder.path + "/config.json";
    write_file_atomically(config, config_json);
    std::vector<std::string> train = {"train", "--config", config};
    train.insert(train.end(), args.begin(), args.end());
    return launch_detached(engine, train, folder, uid, env);
  } catch (...) {
    if (fresh) remove_tree(folder.path);
    throw;
  }
}

}  // namespace tokamak
