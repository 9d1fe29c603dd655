// Shared by the test suites: where the assets and the tiktoken reference ids are, and scratch folders.
#pragma once
#include <QString>
#include <string>

namespace tokamak::test {
// The set-up's cache folder (assets, venv); QSKIP-able checks are left to each suite.
std::string cache_dir();
// Path to an asset in the cache, or empty when the set-up has not fetched it.
std::string asset(const std::string& name);
// The venv's python (with torch and tiktoken), used to produce reference values at test time.
std::string python();
// Runs a command, returns its exit code; stdout is stored in *out when given.
int run(const std::string& command, std::string* out = nullptr);
}  // namespace tokamak::test
