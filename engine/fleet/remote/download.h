// Copies a file (a checkpoint) or a folder's files (a Hugging Face export) from a Tokamak host to this machine
// over the host's shared ssh connection, so that what arrives is known to be what the host has:
// - the host computes each file's size and sha256 (`sha256sum` there) before the copy;
// - bytes go to a hidden partial name beside the destination (DIR/.NAME.part) and are appended as they come
//   (`tail -c +N` there: a broken copy continues from the size it reached, it is not started over);
// - the whole is checked with sha256 here; only a match is renamed to DIR/NAME, so that name never holds
//   anything unverified. A resumed copy that does not match (the partial was damaged, or the host's file
//   changed) is fetched once more from the start; a fresh copy that does not match is an Error of one line.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

class RemoteHost;

struct RemoteFileInfo {
  std::string name;  // the file's name (for a folder: the name inside it)
  uint64_t bytes = 0;
  std::string sha256;  // lower-case hex, as sha256sum prints it
};

// The host's PATH: one file, or the regular files of a folder (not recursive), each with size and sha256.
// *is_folder says which. An Error of one line when PATH is neither.
std::vector<RemoteFileInfo> remote_files(const RemoteHost& host, const std::string& path, bool* is_folder);

struct DownloadResult {
  std::string path;           // DIR/NAME: the verified file or folder here
  uint64_t bytes = 0;         // its size (all files)
  uint64_t fetched = 0;       // bytes that crossed the network this time
  uint64_t resumed_from = 0;  // bytes a partial copy already held when this download began
  int refetched = 0;          // files whose partial copy failed the checksum and were fetched again
  bool already_here = false;  // DIR/NAME existed and matched the host's checksum: nothing was copied
  std::vector<RemoteFileInfo> files;
};

// (bytes here so far, bytes in all); return false to stop (the partial copy stays, for a later resume).
using DownloadProgress = std::function<bool(uint64_t done, uint64_t total)>;

// Copies the host's REMOTE_PATH into TO_DIR (created when missing). Throws an Error of one line: the path is
// not on the host, TO_DIR/NAME exists and differs, the connection broke (run it again to resume), the
// checksum does not match, or PROGRESS stopped it.
DownloadResult download_from_host(const RemoteHost& host, const std::string& remote_path, const std::string& to_dir,
                                  const DownloadProgress& progress = {});

// The partial name DIR/.NAME.part that a download of NAME into DIR writes to.
std::string partial_download_path(const std::string& to_dir, const std::string& name);

}  // namespace tokamak
