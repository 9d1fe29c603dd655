// Control commands as files (see control_file.h).
#include "engine/base/run/control_file.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {

bool is_control_command(const std::string& c) { return c == "pause" || c == "resume" || c == "stop" || c == "sample"; }

void write_control_command(const std::string& dir, const std::string& command) {
  if (!is_directory(dir))
    throw Error("'" + dir + "' is not a run's control folder",
                "is the run folder complete? `tokamak runs list --json`");
  // Names sort in the order written: nanoseconds since the epoch, then the writer's pid.
  const auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  char name[64];
  std::snprintf(name, sizeof name, "%020lld-%d.cmd", static_cast<long long>(ns), static_cast<int>(::getpid()));
  // write_atomically's temporary is NAME.tmp.PID: not a .cmd, so the run never takes half a command.
  write_file_atomically(dir + "/" + name, command + "\n");
}

std::vector<std::string> take_control_commands(const std::string& dir) {
  std::vector<std::string> names, commands;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return commands;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".cmd") == 0) names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    const std::string path = dir + "/" + n;
    std::ifstream in(path);
    std::string command;
    std::getline(in, command);
    std::remove(path.c_str());
    commands.push_back(command);
  }
  return commands;
}

int drop_control_commands_before(const std::string& dir, int64_t before_ns) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return 0;
  std::vector<std::string> old;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() <= 4 || n.compare(n.size() - 4, 4, ".cmd") != 0) continue;
    // The name starts with the writer's clock in nanoseconds (write_control_command); one that does not
    // parse is nobody's command now.
    char* end = nullptr;
    const long long ns = std::strtoll(n.c_str(), &end, 10);
    if (end == n.c_str() || ns < before_ns) old.push_back(dir + "/" + n);
  }
  ::closedir(d);
  for (const std::string& path : old) std::remove(path.c_str());
  return static_cast<int>(old.size());
}

}  // namespace tokamak
