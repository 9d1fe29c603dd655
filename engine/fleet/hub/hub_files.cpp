// Listing, selection, failures and checks of Hub files (see hub_files.h).
#include "engine/fleet/hub/hub_files.h"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/base/data/dataset_source.h"
#include "engine/fleet/hub/hub_listing.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/sha256.h"

namespace tokamak {
namespace {

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::char_traits<char>::length(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

bool wanted(const std::string& name, const std::string& glob) {
  if (!glob.empty()) return ::fnmatch(glob.c_str(), name.c_str(), 0) == 0;
  return ends_with(name, ".bin") || ends_with(name, ".txt") || ends_with(name, ".jsonl");
}

std::vector<HubFile> listing(const HubSelection& s, const HubEnv& env, HttpClient& client) {
  std::vector<HubFile> files;
  int pages = 0;
  for (std::string url = hub_tree_url(env.endpoint, s.repo); !url.empty();) {
    if (++pages > kMaxHubListingPages)
      throw Error(
          "the Hub's listing of " + s.repo + " goes on past " + std::to_string(kMaxHubListingPages) + " pages",
          "is HF_ENDPOINT (" + env.endpoint + ") a Hugging Face Hub? Pick the files with hf:" + s.repo + ":GLOB");
    HttpResult r = client.get_text(url);
    for (int k = 1; k < 4 && r.transient(); ++k) r = client.get_text(url);
    if (r.curl_code != 0 || r.status != 200) throw_hub_failure(r, env, s.repo, "", 4);
    for (HubFile& f : parse_hub_listing_page(r.body, s.repo, url, env.endpoint)) files.push_back(std::move(f));
    if (!r.next_page.empty())
      if (const std::string problem = hub_next_page_problem(r.next_page, env.endpoint); !problem.empty())
        throw Error("the Hub's listing of " + s.repo + " is not followed: " + problem,
                    "is HF_ENDPOINT (" + env.endpoint + ") the Hub, or a mirror that lists on its own address?");
    url = r.next_page;
  }
  return files;
}

std::vector<HubFile> local_listing(const std::string& dir) {
  std::vector<HubFile> files;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') files.push_back({e->d_name, 0, ""});
    ::closedir(d);
  }
  return files;
}

}  // namespace

std::vector<HubFile> select_hub_files(const HubSelection& s, const HubEnv& env, HttpClient& client,
                                      const std::string& dir) {
  if (!s.listed) {
    std::vector<HubFile> files;
    for (const std::string& name : s.files) files.push_back({name, 0, ""});
    return files;
  }
  std::vector<HubFile> all = env.offline ? local_listing(dir) : listing(s, env, client);
  std::sort(all.begin(), all.end(), [](const HubFile& a, const HubFile& b) { return a.name < b.name; });
  std::vector<HubFile> val, train;
  for (const HubFile& f : all)
    if (wanted(f.name, s.glob)) (is_val_shard_name(f.name) ? val : train).push_back(f);
  const std::string what = "hf:" + s.repo + (s.glob.empty() ? "" : ":" + s.glob);
  if (val.empty() && train.empty())
    throw Error(env.offline ? "HF_HUB_OFFLINE is set and " + dir + " holds no file of " + what
                            : "the Hub's dataset " + s.repo + " has no file matching " +
                                  (s.glob.empty() ? "*.bin, *.txt or *.jsonl" : "'" + s.glob + "'"),
                env.offline ? "unset HF_HUB_OFFLINE to download it"
                            : "see its files at https://huggingface.co/datasets/" + s.repo + "/tree/main");
  size_t keep = train.size();
  if (s.shards > 0) keep = std::min<size_t>(keep, static_cast<size_t>(s.shards));
  if (s.tokens > 0) {
    uint64_t tokens = 0;
    size_t k = 0;
    while (k < keep && tokens < s.tokens) {
      if (train[k].size == 0)
        throw Error("--tokens needs the files' sizes, which the listing of " + s.repo + " lacks", "give --shards N");
      tokens += train[k].size > kShardHeaderBytes ? (train[k].size - kShardHeaderBytes) / 2 : 0;
      ++k;
    }
    keep = k;
  }
  train.resize(keep);
  val.insert(val.end(), train.begin(), train.end());
  return val;
}

void throw_hub_failure(const HttpResult& r, const HubEnv& env, const std::string& repo, const std::string& file,
                       int attempts) {
  const std::string what = file.empty() ? "dataset " + repo : file + " of dataset " + repo;
  const std::string where = env.endpoint + (file.empty() ? "" : " (" + hub_file_url(env.endpoint, repo, file) + ")");
  if (r.status == 401 || r.status == 403) {
    const std::string had =
        env.token.empty() ? "no token was sent" : "the token from " + env.token_source + " was sent";
    throw Error("the Hub refused " + what + " (HTTP " + std::to_string(r.status) + ", " + had + ")",
                "the repo is gated, private or misspelt: set HF_TOKEN to a token that can read it (or put one in " +
                    env.token_file + "), and accept its terms on its page");
  }
  if (r.status == 404)
    throw Error("the Hub has no " + what + " (HTTP 404 from " + where + ")",
                "check the names at https://huggingface.co/datasets/" + repo + "/tree/main, or HF_ENDPOINT");
  if (r.status >= 400)
    throw Error("the Hub answered HTTP " + std::to_string(r.status) + " for " + what + " from " + env.endpoint +
                    (attempts > 1 ? " after " + std::to_string(attempts) + " tries" : ""),
                "try again later; what came so far is kept in .part files");
  throw Error("cannot reach " + where + " for " + what + ": " + r.curl_error +
                  (attempts > 1 ? " (" + std::to_string(attempts) + " tries)" : ""),
              "check the network (or HF_ENDPOINT); run the same command again to resume");
}

std::string hub_file_problem(const std::string& path, const HubFile& file) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "it is missing";
  const auto size = static_cast<uint64_t>(st.st_size);
  if (file.size && size != file.size)
    return "it has " + std::to_string(size) + " bytes but the Hub announced " + std::to_string(file.size);
  if (ends_with(file.name, ".bin")) {
    int32_t header[3] = {0, 0, 0};
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(header), sizeof header);
    if (in.gcount() != sizeof header || header[0] != kShardMagic)
      return "it is not an llm.c token shard (magic " + std::to_string(header[0]) + ", not " +
             std::to_string(kShardMagic) + ")";
    if (header[1] != kShardVersion)
      return "its shard header has version " + std::to_string(header[1]) + ", not " + std::to_string(kShardVersion);
    const uint64_t want = kShardHeaderBytes + 2 * static_cast<uint64_t>(static_cast<uint32_t>(header[2]));
    if (header[2] < 0 || want != size)
      return "its header says " + std::to_string(header[2]) + " tokens (" + std::to_string(want) +
             " bytes) but it has " + std::to_string(size) + " bytes";
  }
  if (!file.sha256.empty()) {
    const std::string got = sha256_of_file(path);
    if (got != file.sha256) return "its sha256 is " + got + ", not the Hub's " + file.sha256;
  }
  return {};
}

}  // namespace tokamak
