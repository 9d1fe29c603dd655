// Runs a program (no shell) to its end: stdin from a string, stdout and stderr collected, a time limit. For
// the short ssh commands of a remote host (test connection, start, control, list); the long-lived
// `runs follow` stream is read by the caller's own process object (the studio's QProcess).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

struct ProcessResult {
  int code = -1;  // exit code; -1 when it was killed by a signal or by the time limit
  bool timed_out = false;
  std::string out, err;
};

// Throws an Error only when the program cannot be started at all (ARGV[0] is looked up on PATH).
ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input = {}, double timeout_s = 60);

// Called with each piece of the child's stdout as it comes; returning false ends the child (SIGKILL).
using OutputSink = std::function<bool(const char* data, size_t size)>;
// As run_process, but stdout goes to ON_OUT instead of memory (a download of gigabytes), and there is no
// time limit: a dead connection ends ssh itself (ServerAliveInterval). Killed by ON_OUT: code -1.
ProcessResult stream_process(const std::vector<std::string>& argv, const OutputSink& on_out);

}  // namespace tokamak
