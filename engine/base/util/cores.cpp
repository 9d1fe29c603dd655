#include "engine/base/util/cores.h"

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "engine/base/util/proc_files.h"
#include "engine/base/util/utf8.h"

namespace tokamak {
namespace {

// utime + stime in clock ticks, the parent pid and the comm of /proc/PID/stat; false when it is gone.
bool read_stat(long pid, long* ticks, long* ppid, std::string* comm) {
  const std::optional<ProcStat> s = read_proc_stat(pid);
  if (!s) return false;
  if (comm) *comm = printable(s->comm);  // any user's process may name itself with escape bytes
  if (ppid) *ppid = s->ppid;
  *ticks = s->utime + s->stime;
  return true;
}

bool has_libtorch(long pid) {
  const std::optional<std::string> maps = read_proc_file("/proc/" + std::to_string(pid) + "/maps", 1 << 26);
  return maps && maps->find("libtorch_cpu") != std::string::npos;
}

std::vector<long> all_pids() {
  std::vector<long> pids;
  DIR* d = ::opendir("/proc");
  if (!d) return pids;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (pid > 0 && end && *end == '\0') pids.push_back(pid);
  }
  ::closedir(d);
  return pids;
}

}  // namespace

int cores_given() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<BusyPeer> busy_torch_peers(double sample_s, double min_cores) {
  const long self = ::getpid(), parent = ::getppid();
  std::map<long, long> before;
  for (long pid : all_pids()) {
    long ticks = 0, ppid = 0;
    if (pid == self || pid == parent || !read_stat(pid, &ticks, &ppid, nullptr) || ppid == self) continue;
    before[pid] = ticks;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(sample_s));
  cpu_set_t mine;
  CPU_ZERO(&mine);
  const bool known = ::sched_getaffinity(0, sizeof mine, &mine) == 0;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::vector<BusyPeer> out;
  for (const auto& [pid, ticks0] : before) {
    long ticks = 0, ppid = 0;
    std::string comm;
    if (!read_stat(pid, &ticks, &ppid, &comm)) continue;
    const double cores = static_cast<double>(ticks - ticks0) / hz / sample_s;
    if (cores < min_cores || !has_libtorch(pid)) continue;
    cpu_set_t theirs;
    CPU_ZERO(&theirs);
    int shared = 0;
    if (known && ::sched_getaffinity(static_cast<pid_t>(pid), sizeof theirs, &theirs) == 0) {
      cpu_set_t both;
      CPU_AND(&both, &mine, &theirs);
      shared = CPU_COUNT(&both);
    }
    if (known && shared == 0) continue;
    out.push_back({pid, comm, cores, shared});
  }
  return out;
}

std::string busy_peers_text(const std::vector<BusyPeer>& peers) {
  std::string who;
  for (const BusyPeer& p : peers) {
    char busy[32];
    std::snprintf(busy, sizeof busy, "%.1f", p.cores);
    who += (who.empty() ? "" : ", ") + p.name + " pid " + std::to_string(p.pid) + " using " + busy + " cores";
  }
  const int n = static_cast<int>(peers.size());
  return std::to_string(n) + (n == 1 ? " other LibTorch process is" : " other LibTorch processes are") +
         " busy on this run's cores (" + who + ")";
}

const char* kShareCoresHint =
    "run them one after another with `tokamak queue add`, or give each its own cores, e.g. `taskset -c 0 tokamak "
    "train --set threads=1 …`";

}  // namespace tokamak
