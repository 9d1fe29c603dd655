// Tests end what they start: a detached run outlives the test that started it (that is its point), so a test
// that fails half-way would leave it training into a deleted folder. These kill, by pid, the runs whose run
// folders lie under a test's own data folder.
#pragma once
#include <string>

namespace tokamak::test {

// SIGKILLs the owner of every run folder under DATA_HOME/tokamak/checkpoints that is still alive (and is a
// tokamak-engine process: a pid file naming anything else is left alone). Returns how many were killed.
int kill_runs_under(const std::string& data_home);

}  // namespace tokamak::test
