// Fetches a Hub dataset's files into data_dir()/datasets/NAME/, where `tokamak datasets` lists it and
// data.path=NAME trains on it. Nothing half-written ever has a file's name:
//  - sizes (and sha256, the Hub's X-Linked-Etag or its listing's lfs.oid) are asked for first, and the free
//    disk space is checked against what is still to come before the first byte;
//  - each file comes into a hidden DIR/.NAME.part (hidden names are never read as shards), continued with a
//    Range request after an interruption (a killed process, a dropped connection, a reboot);
//  - a whole file is checked (the announced size; llm.c's header: magic, version, token count against the
//    file's size; the sha256 when the Hub gave one) and only then renamed to DIR/NAME. A resumed file that
//    fails is fetched once more from its start; a fresh one that fails is an Error and its .part is removed.
// Transient failures (no connection, a dropped transfer, 429, 5xx) are retried with back-off; a few files
// come at a time. HF_HUB_OFFLINE=1 makes no request at all: only what is here counts.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/data/hub_catalog.h"

namespace tokamak {

struct FetchProgress {
  std::string dataset;
  uint64_t done = 0;     // bytes of the selected files on this machine (earlier parts included)
  uint64_t total = 0;    // bytes of all the selected files
  uint64_t fetched = 0;  // bytes that came over the network in this call
  int files_done = 0, files = 0;
  double seconds = 0;  // since the first file's request
};

struct FetchOptions {
  int parallel = 4;              // files at a time
  int attempts = 6;              // tries per request before a transient failure is the answer
  double first_backoff_s = 1.0;  // doubled after each failed try
  // Called about twice a second from the calling thread, and once at the end; false cancels (the .part files
  // stay, for a later resume).
  std::function<bool(const FetchProgress&)> progress;
};

struct FetchResult {
  std::string name, repo, dir;
  std::vector<std::string> files;  // the selected files, in order (all now in DIR)
  uint64_t bytes = 0;              // their size
  uint64_t fetched = 0;            // bytes that came over the network
  uint64_t resumed_from = 0;       // bytes earlier .part files held
  int already_here = 0;            // files that were in place before (no request made for them)
  int refetched = 0;               // resumed files that failed their check and came again from the start
  uint64_t tokens = 0;             // tokens in the .bin shards among them
};

// The file in a dataset folder that names the repo whose files it holds ("OWNER/REPO"); hidden, so no listing of
// the dataset's files counts it. A get refuses a folder whose marker names another repo.
inline constexpr const char* kHubRepoMarker = ".hub-repo";

// data_dir()/datasets/NAME.
std::string hub_dataset_dir(const std::string& name);

// Throws an Error of one line: 401/403 (names HF_TOKEN and the token file), 404 (names the repo and the file),
// not enough disk (names both amounts), the disk full while writing (the .part files kept), a file that fails
// its check (nothing kept), no connection after every retry, HF_HUB_OFFLINE with files missing, cancelled.
FetchResult fetch_hub_dataset(const HubSelection& selection, const FetchOptions& options = {});

}  // namespace tokamak
