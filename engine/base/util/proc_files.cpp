// See proc_files.h.
#include "engine/base/util/proc_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>


namespace tokamak {

std::optional<std::string> read_proc_fd(int fd, size_t limit) {
  std::string all;
  char buf[4096];
  while (all.size() < limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;  // ESRCH: the process exited after the open
    if (n == 0) break;
    all.append(buf, static_cast<size_t>(n));
  }
  if (all.size() > limit) all.resize(limit);
  return all;
}

std::optional<std::string> read_proc_file(const std::string& path, size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<std::string> all = read_proc_fd(fd, limit);
  ::close(fd);
  return all;
}

std::optional<ProcStat> parse_proc_stat(const std::string& text) {
  const size_t open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open || close + 2 > text.size())
    return std::nullopt;
  ProcStat s;
  s.comm = text.substr(open + 1, close - open - 1);
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  int i = 2;
  while (i < 22 && rest >> field) {
    ++i;
    if (i == 3) s.state = field.empty() ? '?' : field[0];
    if (i == 4) s.ppid = std::atol(field.c_str());
    if (i == 5) s.pgrp = std::atol(field.c_str());
    if (i == 14) s.utime = std::atol(field.c_str());
    if (i == 15) s.stime = std::atol(field.c_str());
    if (i == 22) s.start_time = field;
  }
  if (i < 15) return std::nullopt;  // cut short: not a stat file
  return s;
}

std::optional<ProcStat> read_proc_stat(long pid) {
  if (pid <= 0) return std::nullopt;
  const std::optional<std::string> text = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  if (!text) return std::nullopt;
  return parse_proc_stat(*text);
}

}  // namespace tokamak
