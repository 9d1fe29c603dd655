// run_process and stream_process (see process.h): fork + execvp with three pipes, drained with poll so that neither a
// large output nor a large input can deadlock the two processes.
#include "engine/base/util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "engine/base/util/error.h"

namespace tokamak {

namespace {

// Both entry points: ON_OUT null collects stdout in the result; TIMEOUT_S <= 0 is no limit.
ProcessResult run(const std::vector<std::string>& argv, const std::string& input, double timeout_s,
                  const OutputSink& on_out) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC))
    throw Error(std::string("cannot start ") + argv.at(0) + ": " + std::strerror(errno), "");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0), ::dup2(out[1], 1), ::dup2(err[1], 2);
    ::execvp(args[0], args.data());
    const char msg[] = "cannot start the program\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(in[0]), ::close(out[1]), ::close(err[1]);
  if (pid < 0) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    throw Error(std::string("cannot start ") + argv.at(0) + ": " + std::strerror(errno), "");
  }
  ProcessResult r;
  size_t written = 0;
  int to_child = in[1];
  if (input.empty()) ::close(to_child), to_child = -1;
  for (int fd : {out[0], err[0]}) ::fcntl(fd, F_SETFL, O_NONBLOCK);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  ::signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its input must not end us
  bool refused = false;        // ON_OUT asked to end the child
  auto drain = [&](int& fd, std::string& into) {
    char buf[65536];
    for (;;) {
      ssize_t n = fd < 0 ? -1 : ::read(fd, buf, sizeof buf);
      if (n > 0) {
        if (&into == &r.out && on_out) {
          if (!refused && !on_out(buf, static_cast<size_t>(n))) refused = true, ::kill(pid, SIGKILL);
        } else {
          into.append(buf, static_cast<size_t>(n));
        }
        continue;
      }
      if (n == 0) ::close(fd), fd = -1;  // end of output
      return;                            // EAGAIN: nothing more now
    }
  };
  // The end is the child's exit, not the end of its output: ssh's ControlPersist master keeps stderr open
  // long after the command that started it has exited.
  int status = 0;
  for (;;) {
    pollfd p[3] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}, {to_child, POLLOUT, 0}};
    ::poll(p, 3, 20);
    drain(out[0], r.out), drain(err[0], r.err);
    if (to_child >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = ::write(to_child, input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<size_t>(n);
      if (n < 0 || written == input.size()) ::close(to_child), to_child = -1;
    }
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (timeout_s > 0 && std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
      break;
    }
  }
  drain(out[0], r.out), drain(err[0], r.err);
  for (int fd : {out[0], err[0], to_child})
    if (fd >= 0) ::close(fd);
  r.code = WIFEXITED(status) && !r.timed_out && !refused ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const std::string& input, double timeout_s) {
  return run(argv, input, timeout_s, nullptr);
}

ProcessResult stream_process(const std::vector<std::string>& argv, const OutputSink& on_out) {
  return run(argv, {}, 0, on_out);
}

}  // namespace tokamak
