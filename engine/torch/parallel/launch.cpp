// The local launcher (see launch.h). Workers run in their own process group, so a Ctrl-C at the terminal
// reaches only the launcher, which forwards it once; each worker also dies with the launcher
// (PR_SET_PDEATHSIG), so killing the launcher never leaves ranks behind.
#include "engine/torch/parallel/launch.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <cstring>
#include <thread>

#include "engine/base/util/error.h"
#include "engine/base/util/proc_files.h"
#include "engine/torch/parallel/dist_env.h"

extern char** environ;

namespace tokamak {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> own_command_line() {
  const std::string all = read_proc_file("/proc/self/cmdline").value_or("");
  std::vector<std::string> argv;
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\0', start);
    if (end == std::string::npos) end = all.size();
    argv.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

// This process's environment with the worker's variables set (replacing any of the same name).
std::vector<std::string> environment_for(int rank, int world_size, int port) {
  std::vector<std::string> mine = worker_environment(rank, world_size, port), env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    std::string name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& m : mine) replaced = replaced || m.compare(0, name.size() + 1, name + "=") == 0;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), mine.begin(), mine.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

std::string describe_exit(int rank, pid_t pid, int status) {
  std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
  if (WIFSIGNALED(status))
    return who + " was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return who + " exited with code " + std::to_string(WEXITSTATUS(status));
}

int exit_code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

// The store lives as long as the launcher; port 0 lets the kernel pick a free one, with no race.
c10::intrusive_ptr<c10d::TCPStore> serve_rendezvous_store() {
  c10d::TCPStoreOptions so;
  so.port = 0;
  so.isServer = true;
  so.waitWorkers = false;
  try {
    return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  } catch (const std::exception& e) {
    throw Error(std::string("cannot serve the rendezvous store on 127.0.0.1: ") + e.what(),
                "check that loopback works");
  }
}

}  // namespace

LaunchResult launch_workers(const LaunchOptions& o) {
  auto note = [&](const std::string& s) {
    if (o.note) o.note(s);
  };
  const c10::intrusive_ptr<c10d::TCPStore> store = serve_rendezvous_store();
  const int port = store->getPort();
  std::vector<std::string> argv = o.argv.empty() ? own_command_line() : o.argv;
  const std::string exe = o.argv.empty() ? "/proc/self/exe" : o.argv.front();
  const pid_t launcher = getpid();

  std::vector<pid_t> pids(static_cast<size_t>(o.world_size), -1);
  std::vector<bool> alive(pids.size(), false);
  for (int r = 0; r < o.world_size; ++r) {
    // Everything the child needs is built before fork: after it only async-signal-safe calls are allowed.
    std::vector<std::string> env = environment_for(r, o.world_size, port), args = argv;
    std::vector<char*> envp = pointers(env), argp = pointers(args);
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != launcher) _exit(126);
      execve(exe.c_str(), argp.data(), envp.data());
      _exit(127);
    }
    if (pid < 0) {
      for (size_t k = 0; k < pids.size(); ++k)
        if (alive[k]) kill(pids[k], SIGKILL), waitpid(pids[k], nullptr, 0);
      throw Error("cannot start rank " + std::to_string(r) + ": " + std::strerror(errno), "too many processes?");
    }
    pids[static_cast<size_t>(r)] = pid, alive[static_cast<size_t>(r)] = true;
  }
  std::string list;
  for (pid_t p : pids) list += (list.empty() ? "" : " ") + std::to_string(p);
  note("started " + std::to_string(o.world_size) + " ranks, pids " + list +
       " (rendezvous on 127.0.0.1:" + std::to_string(port) + ")");

  LaunchResult result;
  int running = o.world_size, interrupts_seen = 0;
  Clock::time_point deadline = Clock::time_point::max();
  while (running > 0) {
    for (size_t r = 0; r < pids.size(); ++r) {
      int status = 0;
      if (!alive[r] || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      alive[r] = false, --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (ok || result.failed_rank >= 0) continue;
      result.failed_rank = static_cast<int>(r);
      result.exit_code = exit_code_of(status);
      result.reason = describe_exit(static_cast<int>(r), pids[r], status);
      if (running > 0)
        note(result.reason + "; waiting up to " + std::to_string(o.grace.count() / 1000) +
             " s for the other ranks to stop");
      deadline = Clock::now() + o.grace;
    }
    // Once rank 0 (the one that records the run) has ended after a failure, the others have nothing left to do.
    if (result.failed_rank >= 0 && !alive[0]) deadline = std::min(deadline, Clock::now());
    const int wanted = o.interrupts ? o.interrupts->load() : 0;
    for (; interrupts_seen < wanted; ++interrupts_seen) {
      const int sig = interrupts_seen == 0 ? SIGINT : SIGKILL;
      for (size_t r = 0; r < pids.size(); ++r)
        if (alive[r]) kill(pids[r], sig);
    }
    if (running > 0 && Clock::now() > deadline) {
      note("killing the ranks still running after " + result.reason);
      for (size_t r = 0; r < pids.size(); ++r)
        if (alive[r]) kill(pids[r], SIGKILL);
      deadline = Clock::time_point::max();
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return result;
}

}  // namespace tokamak
