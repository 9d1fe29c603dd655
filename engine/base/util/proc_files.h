// Reading /proc and /sys. Their files belong to processes and devices that come and go: a process that exits
// between the open and the read makes read(2) fail with ESRCH, which libstdc++'s filebuf turns into an exception
// that escapes std::istreambuf_iterator. Every read of these files goes through here and answers "gone" instead.
#pragma once
#include <optional>
#include <string>

namespace tokamak {

// The whole file, or nullopt when it cannot be opened or read (missing, vanished mid-read, not permitted). Never
// throws. Reads at most `limit` bytes (a /proc file has no size to ask for beforehand).
std::optional<std::string> read_proc_file(const std::string& path, size_t limit = 1 << 22);
// The same from a file already open (read_proc_file's second half; the caller closes FD).
std::optional<std::string> read_proc_fd(int fd, size_t limit = 1 << 22);

// The fields of /proc/PID/stat this project uses (proc(5)).
struct ProcStat {
  std::string comm;        // field 2, without its parentheses: any bytes a process set with prctl(PR_SET_NAME)
  char state = '?';        // field 3: R, S, D, Z, …
  long ppid = 0;           // field 4
  long pgrp = 0;           // field 5, the process group
  long utime = 0;          // field 14, clock ticks
  long stime = 0;          // field 15, clock ticks
  std::string start_time;  // field 22, clock ticks since boot, as written
};
// PID's stat, or nullopt when the process is gone (or its stat is not what proc(5) describes).
std::optional<ProcStat> read_proc_stat(long pid);
// Parses the text of a stat file; the comm may hold spaces and ')', so fields are counted after the last ')'.
std::optional<ProcStat> parse_proc_stat(const std::string& text);

}  // namespace tokamak
