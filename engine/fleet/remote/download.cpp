// download_from_host (see download.h): listing with checksums on the host, resumable appends here, verify,
// rename.
#include "engine/fleet/remote/download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "engine/fleet/remote/remote_host.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/process.h"
#include "engine/base/util/sha256.h"

namespace tokamak {
namespace {

// $1: the path, $2: the host's name for messages. Prints "file" or "folder", then "SIZE HASH  NAME" per file.
// Its own errors exit 3 with one line (not 127 or "No such file": those read as "Tokamak not installed").
constexpr const char* kListScript = R"(p=$1
one() {
  s=$(stat -c %s -- "$1" 2>/dev/null) && h=$(sha256sum -- "$1" 2>/dev/null) || {
    echo "cannot read '$1' on $2" >&2; exit 3; }
  printf '%s %s\n' "$s" "$h"
}
if [ -d "$p" ]; then
  echo folder; cd -- "$p" || exit 3
  for f in *; do if [ -f "$f" ]; then one "$f" "$2"; fi; done
elif [ -f "$p" ]; then
  echo file; one "$p" "$2"
else
  echo "'$p' is not a file or folder on $2" >&2; exit 3
fi
exit 0)";

uint64_t local_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::string base_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Appends the host's REMOTE from byte HAVE to LOCAL; ON_BYTES(bytes of LOCAL) may stop it. Returns the bytes
// that came; throws when the copy broke off.
uint64_t fetch(const RemoteHost& host, const std::string& remote, const std::string& local, uint64_t have,
               uint64_t want, const std::function<bool(uint64_t)>& on_bytes) {
  const int fd = ::open(local.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (have == 0 ? O_TRUNC : 0), 0644);
  if (fd < 0) throw Error("cannot write " + local + ": " + std::strerror(errno), "choose a folder you can write to");
  uint64_t got = 0;
  int write_errno = 0;
  bool stopped = false;
  const ProcessResult r = stream_process(host.argv({"tail", "-c", "+" + std::to_string(have + 1), "--", remote}),
                                         [&](const char* data, size_t n) {
                                           for (size_t done = 0; done < n;) {
                                             const ssize_t w = ::write(fd, data + done, n - done);
                                             if (w < 0 && errno == EINTR) continue;
                                             if (w < 0) return write_errno = errno, false;
                                             done += static_cast<size_t>(w);
                                           }
                                           got += n;
                                           if (on_bytes && !on_bytes(have + got)) return stopped = true, false;
                                           return true;
                                         });
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  const std::string name = base_name(remote);
  const std::string where =
      "the copy of " + name + " stopped at " + std::to_string(have + got) + " of " + std::to_string(want) + " bytes";
  const std::string again = "run the download again: it continues from there";
  if (write_errno) throw Error("cannot write " + local + ": " + std::strerror(write_errno) + "; " + where, again);
  if (stopped) throw Error("download stopped: " + where, again);
  if (r.code != 0) throw Error(describe_ssh_failure(host.target(), r.code, r.err, "tail") + "; " + where, again);
  if (!synced) throw Error("cannot write " + local + ": " + std::strerror(errno), "check the disk");
  return got;
}

}  // namespace

std::string partial_download_path(const std::string& to_dir, const std::string& name) {
  return to_dir + "/." + name + ".part";
}

std::vector<RemoteFileInfo> remote_files(const RemoteHost& host, const std::string& path, bool* is_folder) {
  std::istringstream in(host.run({"sh", "-c", kListScript, "sh", path, host.target().spec()}, {}, 0));
  std::string kind, line;
  std::getline(in, kind);
  *is_folder = kind == "folder";
  std::vector<RemoteFileInfo> files;
  while (std::getline(in, line)) {
    // "SIZE HASH  NAME"; sha256sum writes "\HASH" for a name with a backslash or newline: not ours to copy.
    const size_t space = line.find(' ');
    if (space == std::string::npos || line.size() < space + 1 + 64 + 2 || line[space + 1] == '\\')
      throw Error("cannot copy '" + line + "' from " + path + " on " + host.target().spec(),
                  "rename files with a backslash or newline in their names there");
    RemoteFileInfo f;
    f.bytes = std::stoull(line.substr(0, space));
    f.sha256 = line.substr(space + 1, 64);
    f.name = base_name(line.substr(space + 1 + 64 + 2));
    files.push_back(f);
  }
  if (kind != "file" && kind != "folder")
    throw Error("unexpected answer from " + host.target().spec() + " about " + path, "test the connection");
  return files;
}

DownloadResult download_from_host(const RemoteHost& host, const std::string& remote_path, const std::string& to_dir,
                                  const DownloadProgress& progress) {
  DownloadResult out;
  bool folder = false;
  out.files = remote_files(host, remote_path, &folder);
  const std::string name = base_name(remote_path);
  out.path = to_dir + "/" + name;
  for (const RemoteFileInfo& f : out.files) out.bytes += f.bytes;
  auto local_of = [&](const std::string& base, const RemoteFileInfo& f) { return folder ? base + "/" + f.name : base; };

  // What is already at the destination is kept only when it is the host's to the byte.
  if (path_exists(out.path)) {
    bool same = folder == is_directory(out.path);
    for (const RemoteFileInfo& f : out.files)
      same = same && path_exists(local_of(out.path, f)) && sha256_of_file(local_of(out.path, f)) == f.sha256;
    if (!same)
      throw Error(out.path + " exists and is not the host's " + remote_path,
                  "remove it, or download to another folder");
    out.already_here = true;
    return out;
  }
  make_dirs(to_dir);
  const std::string part = partial_download_path(to_dir, name);
  if (folder) make_dirs(part);
  else if (is_directory(part)) remove_tree(part);

  uint64_t before = 0;  // bytes of the files already done
  for (const RemoteFileInfo& f : out.files) {
    const std::string local = local_of(part, f), remote = folder ? remote_path + "/" + f.name : remote_path;
    auto on_bytes = [&](uint64_t here) { return !progress || progress(before + here, out.bytes); };
    uint64_t have = local_size(local);
    if (have > f.bytes) have = 0;  // longer than the host's file: not a prefix of it
    out.resumed_from += have;
    if (progress && !progress(before + have, out.bytes)) throw Error("download stopped", "run it again to resume");
    for (int attempt = 0;; ++attempt) {
      if (have < f.bytes || !path_exists(local)) out.fetched += fetch(host, remote, local, have, f.bytes, on_bytes);
      if (local_size(local) == f.bytes && sha256_of_file(local) == f.sha256) break;
      ::unlink(local.c_str());
      if (have == 0 || attempt > 0)
        throw Error("the copy of " + f.name + " from " + host.target().spec() +
                        " does not match the host's sha256 (the file may have changed there while it was copied)",
                    "download it again");
      have = 0;  // a damaged partial copy: fetched again from the start
      ++out.refetched;
    }
    before += f.bytes;
  }
  if (::rename(part.c_str(), out.path.c_str()) != 0)
    throw Error("cannot rename " + part + " to " + out.path + ": " + std::strerror(errno), "check the folder");
  return out;
}

}  // namespace tokamak
