// The engine kit `tokamak remote install` pushes: tokamak and tokamak-engine from beside the running program, the
// libraries a GPU host lacks (not LibTorch's or CUDA's, which the host's torch wheel and driver provide, nor the C
// library and the C++ runtime: Debian 12's libstdc++ itself asks for glibc 2.36, newer than the images it would
// help), and the assets, as one .tar.gz in cache_dir()/kits/, packed once per build. Also the resumable push of a file to a host.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace tokamak {

class RemoteHost;

struct EngineKit {
  std::string path;     // the .tar.gz here
  std::string sha256;   // of that file
  std::string version;  // version_line() of the build it holds
  int64_t bytes = 0, unpacked_kb = 0;
  std::string glibc, glibcxx;  // the newest GLIBC_ / GLIBCXX_ symbol versions its files ask for
};

// The kit of the programs in PROGRAMS_DIR (made now, or the one made before for the same programs). Each step of
// the packing is said to PROGRESS. An Error of one line when a program, a library or an asset is missing.
EngineKit engine_kit(const std::string& programs_dir, const std::function<void(const std::string&)>& progress);

// Pushes LOCAL to REMOTE_PATH on the host in pieces appended to REMOTE_PATH.part, which a push cut short leaves:
// the next push goes on from its size (and starts again if its bytes are not LOCAL's). The whole file is checked
// by its sha256 there before it takes its name. PROGRESS(done, total) after each piece. Returns the byte it
// resumed at (0 when it started afresh).
uint64_t push_file(const RemoteHost& host, const std::string& local, const std::string& sha256,
                   const std::string& remote_path, const std::function<void(uint64_t, uint64_t)>& progress);

}  // namespace tokamak
