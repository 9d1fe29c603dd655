// Every test executable links this file (tests/CMakeLists.txt adds it to each suite, not to the support
// library, so the linker cannot drop it). Before main() it points the process, and every child it starts,
// at empty folders of its own: the dataset cache, the run store's data folder and the settings folder. Only
// the set-up's assets (tokenizer ranks, default corpus) and venv are shared, read-only. A suite therefore
// sees a fresh machine whether or not this machine has run Tokamak before: a test that passed only because a
// dataset was already tokenized (the first JSON event was "progress", not "start") now fails everywhere.
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/base/util/files.h"

namespace {

// Plain storage and POSIX calls only: this runs from atexit, after LibTorch's and the C++ library's own
// teardown may have begun (std::filesystem from there crashed in libtorch's copy of it).
char scratch_root[4096];

int remove_entry(const char* path, const struct stat*, int, struct FTW*) { return ::remove(path), 0; }

void remove_scratch() {
  if (scratch_root[0]) ::nftw(scratch_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

__attribute__((constructor)) void isolate_test_process() {
  // A suite started by another suite (a child test process) keeps its parent's world.
  if (std::getenv("TOKAMAK_TEST_SETUP_CACHE")) return;
  const std::string setup_cache = tokamak::cache_dir();
  const char* tmp = std::getenv("TMPDIR");
  std::snprintf(scratch_root, sizeof scratch_root, "%s/tokamak-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!::mkdtemp(scratch_root)) {  // the suites then say which asset or folder they could not find
    scratch_root[0] = 0;
    return;
  }
  const std::string root = scratch_root;
  ::mkdir((root + "/cache").c_str(), 0700);
  ::symlink((setup_cache + "/assets").c_str(), (root + "/cache/assets").c_str());
  ::setenv("TOKAMAK_TEST_SETUP_CACHE", setup_cache.c_str(), 1);
  ::setenv("TOKAMAK_CACHE", (root + "/cache").c_str(), 1);
  ::unsetenv("TOKAMAK_DATASETS");
  ::setenv("XDG_DATA_HOME", (root + "/data").c_str(), 1);
  // Another suite's run busy on the same cores must not change this one's threads (engine/base/util/core_sharing.h).
  ::setenv("TOKAMAK_NO_CORE_SHARING", "1", 1);
  ::setenv("XDG_CONFIG_HOME", (root + "/config").c_str(), 1);  // also where QSettings keeps the studio's settings
  // The Hugging Face Hub: never the real one, nor this machine's token (a suite points HF_ENDPOINT at its own
  // server, tests/support/nginx_server.h).
  ::setenv("HF_HOME", (root + "/hf").c_str(), 1);
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);  // the discard port: nothing answers there
  for (const char* name : {"HF_TOKEN", "HF_TOKEN_PATH", "HF_HUB_OFFLINE"}) ::unsetenv(name);
  // No suite's run tells the developer's desktop it finished: the notification tests start a bus of their own.
  ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
  std::atexit(remove_scratch);
}

}  // namespace
