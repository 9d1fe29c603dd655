// Helpers shared by the fuzz targets: inputs that the code under test reads from a path are written to a
// private temporary file first; a failed property aborts (libFuzzer keeps the input as a crash).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tokamak::fuzz {

// One file per process, rewritten for every input.
inline const std::string& input_file(const char* suffix) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/tokamak-fuzz-" + std::to_string(::getpid()) + suffix;
  }();
  return path;
}

inline const std::string& write_input(const uint8_t* data, size_t size, const char* suffix = ".in") {
  const std::string& path = input_file(suffix);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}

// A property that must hold: abort with a message so the input is saved as a crash.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz property failed: %s\n", what);
    std::abort();
  }
}

}  // namespace tokamak::fuzz
