// See output_path.h.
#include "engine/base/util/output_path.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The first bytes of a file; "" when it cannot be read.
std::string head_of(const std::string& path, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return {};
  std::string bytes(n, '\0');
  const ssize_t got = ::read(fd, bytes.data(), n);
  ::close(fd);
  bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return bytes;
}

// safetensors: 8 bytes of little-endian header length, then the JSON header, which starts with '{'.
bool looks_like_safetensors(const std::string& path) {
  if (ends_with(path, ".safetensors")) return true;
  const std::string h = head_of(path, 9);
  if (h.size() < 9 || h[8] != '{') return false;
  uint64_t len = 0;
  std::memcpy(&len, h.data(), 8);
  return len > 1 && len < (100u << 20);
}

bool same_file(const struct stat& a, const std::string& other) {
  struct stat b {};
  return ::stat(other.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// A Tokamak checkpoint's header names its format in the metadata (engine/torch/checkpoint/checkpoint.cpp).
bool is_tokamak_checkpoint(const std::string& path) {
  const std::string h = head_of(path, 8);
  if (h.size() < 8) return false;
  uint64_t len = 0;
  std::memcpy(&len, h.data(), 8);
  if (len < 2 || len > (100u << 20)) return false;
  return head_of(path, 8 + len).find("\"format\":\"tokamak-checkpoint\"") != std::string::npos;
}

// protected_kind, where a safetensors file is the command's own output (a Hugging Face export's
// model.safetensors): only a Tokamak checkpoint is protected then.
std::string protected_kind_of(const std::string& path, bool safetensors_is_output) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (head_of(path, 16) == std::string("SQLite format 3\0", 16)) return "a run store (an SQLite database)";
  if (safetensors_is_output ? is_tokamak_checkpoint(path) : looks_like_safetensors(path))
    return "a checkpoint (safetensors)";
  return {};
}

// What no rule.replace lets the command replace: what it reads, then anything protected_kind names.
void refuse_protected(const std::string& path, const struct stat& st, const OutputRule& rule,
                      bool safetensors_is_output) {
  for (const std::string& in : rule.inputs)
    if (!in.empty() && same_file(st, in))
      throw Error("'" + path + "' is what this command reads" + (in == path ? "" : " (" + in + ")") +
                      ": it is never replaced by " + rule.what,
                  "write " + rule.what + " somewhere else");
  if (const std::string kind = protected_kind_of(path, safetensors_is_output); !kind.empty())
    throw Error("'" + path + "' is " + kind + ": it is never replaced by " + rule.what,
                "write " + rule.what + " somewhere else");
}

}  // namespace

std::string protected_kind(const std::string& path) { return protected_kind_of(path, false); }

void check_output_file(const std::string& path, const OutputRule& rule) {
  if (path.empty()) throw Error(rule.what + ": no path given", "name the file to write");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // nothing there: nothing to lose
  refuse_protected(path, st, rule, false);
  bool same_kind = rule.extensions.empty();
  for (const std::string& e : rule.extensions) same_kind = same_kind || ends_with(path, e);
  if (!same_kind) {
    std::string kinds;
    for (const std::string& e : rule.extensions) kinds += (kinds.empty() ? "" : " or ") + e;
    throw Error("'" + path + "' exists and is not a " + kinds + " file: it is not replaced by " + rule.what,
                "remove it yourself if it is not wanted, or write " + rule.what + " somewhere else");
  }
  if (!rule.replace) throw Error("'" + path + "' exists", rule.force_hint);
}

void check_output_folder(const std::string& path, const std::vector<std::string>& made, const OutputRule& rule) {
  if (path.empty()) throw Error(rule.what + ": no folder given", "name the folder to write");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode))
    throw Error("'" + path + "' is " + (protected_kind(path).empty() ? "a file" : protected_kind(path)) +
                    ", not a folder: " + rule.what + " is a folder",
                "name a new or empty folder");
  DIR* d = ::opendir(path.c_str());
  if (!d) throw Error("cannot read the folder '" + path + "': " + std::strerror(errno), "check its permissions");
  std::string foreign;
  std::vector<std::string> present;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool ours = false;
    for (const std::string& m : made) ours = ours || m == name;
    if (!ours && foreign.empty()) foreign = name;
    if (ours) present.push_back(name);
  }
  ::closedir(d);
  // Each file it would write is one file output: never what the command reads, a link, a FIFO, the store or a
  // checkpoint, whatever --force says. Its own model.safetensors is a safetensors file by kind.
  for (const std::string& name : present) {
    const std::string file = path + (path.back() == '/' ? "" : "/") + name;
    struct stat fst {};
    if (::lstat(file.c_str(), &fst) != 0) continue;
    if (rule.made_are_folders && !S_ISDIR(fst.st_mode))
      throw Error("'" + file + "' is " + (protected_kind(file).empty() ? "a file" : protected_kind(file)) +
                      ", where " + rule.what + " makes a folder: nothing is written",
                  "remove it yourself if it is not wanted, or write " + rule.what + " somewhere else");
    if (!rule.made_are_folders) refuse_protected(file, fst, rule, ends_with(name, ".safetensors"));
  }
  const bool any_made = !present.empty();
  if (!foreign.empty())
    throw Error("the folder '" + path + "' holds files " + rule.what + " does not make ('" + foreign +
                    "'): nothing is written into it",
                "name a new or empty folder");
  if (any_made && !rule.replace && !rule.made_are_folders)
    throw Error("'" + path + "' already holds " + rule.what, rule.force_hint);
}

}  // namespace tokamak
