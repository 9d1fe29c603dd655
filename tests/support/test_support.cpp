#include "tests/support/test_support.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "engine/base/util/files.h"

namespace tokamak::test {

// The set-up's cache (venv, assets), not the empty one isolated_process.cpp gives each suite.
std::string cache_dir() {
  const char* setup = std::getenv("TOKAMAK_TEST_SETUP_CACHE");
  return setup && *setup ? std::string(setup) : tokamak::cache_dir();
}

std::string asset(const std::string& name) {
  std::string p = cache_dir() + "/assets/" + name;
  return path_exists(p) ? p : std::string();
}

std::string python() { return cache_dir() + "/venv/bin/python"; }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET, a.sin_addr.s_addr = htonl(INADDR_LOOPBACK), a.sin_port = 0;
  socklen_t len = sizeof a;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

int run(const std::string& command, std::string* out) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return -1;
  std::string buf;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) buf.append(chunk, n);
  int status = ::pclose(pipe);
  if (out) *out = std::move(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tokamak::test
