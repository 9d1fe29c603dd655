// Shared by the test suites: where the assets and the tiktoken reference ids are, and scratch folders.
#pragma once
#include <QString>
#include <string>

#include <exception>

namespace tokamak::test {
// How long a test waits for something that happens soon (a window to close, a file to appear): long enough
// for a busy 2-core laptop. It only stops a hung test; no test asserts on how fast anything happens.
constexpr int kPatienceMs = 60000;
// The set-up's cache folder (assets, venv); QSKIP-able checks are left to each suite.
std::string cache_dir();
// Path to an asset in the cache, or empty when the set-up has not fetched it.
std::string asset(const std::string& name);
// The venv's python (with torch and tiktoken), used to produce reference values at test time.
std::string python();
// A TCP port on 127.0.0.1 that was free a moment ago: a rendezvous store, sshd or slurmctld started by a test.
int free_port();
// Runs a command, returns its exit code; stdout is stored in *out when given.
int run(const std::string& command, std::string* out = nullptr);

// The what() of the exception f throws, or "" when it throws none (so a test can assert both that an input
// is refused and what the user is told).
template <class F>
QString error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace tokamak::test
