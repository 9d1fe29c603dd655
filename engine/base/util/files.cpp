// File helpers: cache and data folders, atomic writes.
#include "engine/base/util/files.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <zlib.h>

#include "engine/base/util/error.h"
#include "engine/base/util/utf8.h"

namespace fs = std::filesystem;

namespace tokamak {

static std::string home() {
  const char* h = std::getenv("HOME");
  return h && *h ? h : "/tmp";
}

static std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string cache_dir() {
  std::string dir = std::getenv("TOKAMAK_CACHE") && *std::getenv("TOKAMAK_CACHE")
                        ? std::string(std::getenv("TOKAMAK_CACHE"))
                        : env_or("XDG_CACHE_HOME", home() + "/.cache") + "/tokamak";
  make_dirs(dir);
  return dir;
}

std::string datasets_dir() {
  std::string dir = env_or("TOKAMAK_DATASETS", cache_dir() + "/datasets");
  make_dirs(dir);
  return dir;
}

std::string data_dir() {
  std::string dir = env_or("XDG_DATA_HOME", home() + "/.local/share") + "/tokamak";
  make_dirs(dir);
  return dir;
}

std::string config_dir() { return env_or("XDG_CONFIG_HOME", home() + "/.config") + "/tokamak"; }

// An installed package keeps its own assets beside its programs: <prefix>/bin/tokamak → <prefix>/share/tokamak.
static std::string installed_assets_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : (self.parent_path().parent_path() / "share" / "tokamak" / "assets").string();
}

std::string presets_dir(const std::string& kind) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = self.parent_path().parent_path() / "share" / "tokamak" / kind;
    if (is_directory(installed.string())) return installed.string();
  }
  const std::string source = std::string(TOKAMAK_RESOURCES_DIR) + "/" + kind;
  return is_directory(source) ? source : std::string();
}

// A gzip file unpacked to `to` (through a temporary file: a crash leaves no half corpus behind).
static void gunzip_to(const std::string& from, const std::string& to) {
  gzFile in = gzopen(from.c_str(), "rb");
  if (!in) throw Error("cannot read '" + from + "': " + std::strerror(errno), "check the file and its permissions");
  try {
    write_atomically(to, [&](const std::string& tmp) {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      char buf[1 << 16];
      int n;
      while ((n = gzread(in, buf, sizeof buf)) > 0) out.write(buf, n);
      if (n < 0) throw Error("'" + from + "' is not a readable gzip file", "reinstall the package that ships it");
      out.flush();
      if (!out) throw Error("cannot write '" + to + "': disk full?", "free some space and try again");
    });
  } catch (...) {
    gzclose(in);
    throw;
  }
  gzclose(in);
}

std::string asset_path(const std::string& name) {
  const std::string cached = cache_dir() + "/assets/" + name;
  if (path_exists(cached)) return cached;
  if (const std::string dir = installed_assets_dir(); !dir.empty() && path_exists(dir + "/" + name))
    return dir + "/" + name;
  // The default corpus is Debian's jargon-text, which keeps it gzipped under /usr/share/doc: unpacked once.
  const std::string debian_jargon = "/usr/share/doc/jargon-text/jargon.txt.gz";
  if (name == "jargon.txt" && path_exists(debian_jargon)) {
    gunzip_to(debian_jargon, cached);
    return cached;
  }
  throw Error("asset '" + name + "' is missing from " + cache_dir() + "/assets",
              name == "jargon.txt" ? "install Debian's jargon-text (sudo apt install jargon-text), or run "
                                     "scripts/setup.sh in a source checkout"
                                   : "reinstall the tokamak package, or run scripts/setup.sh in a source checkout");
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "': " + std::strerror(errno), "check the path and its permissions");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

// Flushes PATH (a file or a folder) to the disk; what cannot be opened or synced (a FIFO, a file system without
// fsync) is left as it is: the rename stays atomic either way, only its durability across a power cut is lost.
void sync_path(const std::string& path, bool folder) {
  const int fd = ::open(path.c_str(), (folder ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write) {
  fs::path target(path);
  if (target.has_parent_path()) make_dirs(target.parent_path().string());
  // Unique per host, process and call: two hosts with one pid on a shared home, or two threads of one process,
  // never write into one temporary.
  static std::atomic<uint64_t> calls{0};
  char host[64] = "";
  ::gethostname(host, sizeof host - 1);
  const std::string tmp = path + ".tmp." + safe_file_name(host) + "." + std::to_string(::getpid()) + "." +
                          std::to_string(calls.fetch_add(1));
  try {
    write(tmp);
    // On the disk before the rename: after a power cut the file is the old one or the whole new one, never an
    // empty one (a renamed file whose blocks were not yet written).
    sync_path(tmp, false);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw Error("cannot write '" + path + "': " + ec.message(), "check that its folder is writable");
  }
  sync_path(target.has_parent_path() ? target.parent_path().string() : ".", true);
}

void with_file_lock(const std::string& lock_path, const std::function<void()>& fn) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) ::flock(fd, LOCK_EX);
  try {
    fn();
  } catch (...) {
    if (fd >= 0) ::close(fd);
    throw;
  }
  if (fd >= 0) ::close(fd);  // closing lets the lock go
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write '" + path + "': " + std::strerror(errno), "check that its folder is writable");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) throw Error("cannot write '" + path + "': disk full?", "free some space and try again");
  });
}

void write_private_file(const std::string& path, const std::string& contents) {
  const std::string folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path().string() : ".";
  make_dirs(folder);
  if (::chmod(folder.c_str(), 0700) != 0)
    throw Error("cannot make '" + folder + "' private (mode 0700): " + std::strerror(errno),
                "check that the folder is yours");
  write_atomically(path, [&](const std::string& tmp) {
    // Created 0600 from the start: never readable by others, not even between the open and a chmod.
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("cannot write '" + path + "': " + std::strerror(errno), "check that its folder is writable");
    const bool whole = ::write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size());
    ::close(fd);
    if (!whole) throw Error("cannot write '" + path + "': disk full?", "free some space and try again");
  });
}

std::string safe_file_name(const std::string& name) {
  constexpr size_t kMaxBytes = 100;
  std::string out;
  // Whole characters only: a name cut inside one would make the folder's path, and every JSON line that
  // carries it, invalid UTF-8. A byte that starts no character becomes '_' like a separator.
  for (size_t at = 0; at < name.size();) {
    const size_t n = utf8_char_length(name, at);
    const char c = name[at];
    const bool plain = n > 1 || (n == 1 && c != '/' && c != '\\' && static_cast<unsigned char>(c) >= 0x20);
    const size_t take = plain ? n : 1;
    if (out.size() + take > kMaxBytes) break;
    if (plain) out.append(name, at, n);
    else out += '_';
    at += n > 0 ? n : 1;
  }
  if (out.empty() || out[0] == '.') out.insert(0, "_");
  return out;
}

void remove_tree(const std::string& path) {
  if (path.empty()) return;
  // Depth first (children before their folder), without following links, staying on one file system.
  ::nftw(
      path.c_str(),
      [](const char* p, const struct stat*, int type, struct FTW*) {
        return (type == FTW_DP ? ::rmdir(p) : ::unlink(p)), 0;  // go on past a failure: best effort
      },
      16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec && !fs::is_directory(path))
    throw Error("cannot create folder '" + path + "': " + ec.message(), "check the permissions of its parent");
}

uint64_t fnv1a64(const void* data, size_t size, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex64(uint64_t value) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

}  // namespace tokamak
