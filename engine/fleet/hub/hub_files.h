// What the fetcher knows of one file of a Hub dataset, how a listing of the repo becomes the selected files
// (hf:OWNER/REPO[:GLOB]), what a failed request means in one line, and the check a whole file must pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/data/hub_catalog.h"
#include "engine/fleet/hub/hub_env.h"
#include "engine/fleet/hub/http_client.h"

namespace tokamak {

struct HubFile {
  std::string name;
  uint64_t size = 0;   // 0 = not known yet (ask with HEAD)
  std::string sha256;  // lower-case hex; "" when the Hub gave none
};

// The files of SELECTION: a catalog entry's names, or the Hub's listing of the repo (every page) filtered by
// the glob (default: *.bin, *.txt, *.jsonl), cut to the first `shards` train files or `tokens` tokens (the
// validation files, *_val_*, always kept). Offline, the listing is the folder's own files.
std::vector<HubFile> select_hub_files(const HubSelection& selection, const HubEnv& env, HttpClient& client,
                                      const std::string& dir);

// The one-line Error for a request that failed for good (401/403, 404, other statuses, no connection).
[[noreturn]] void throw_hub_failure(const HttpResult& r, const HubEnv& env, const std::string& repo,
                                    const std::string& file, int attempts);

// "" when PATH is FILE whole: its size, llm.c's header for a .bin (magic, version, token count against the
// size), its sha256 when known; else what is wrong, for a message.
std::string hub_file_problem(const std::string& path, const HubFile& file);

}  // namespace tokamak
