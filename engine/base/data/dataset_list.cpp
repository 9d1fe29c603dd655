// list_datasets (see dataset_list.h): reads manifests and shard headers only, never tokenizes.
#include "engine/base/data/dataset_list.h"

#include <dirent.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/data/shard.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace {

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string base_name(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

}  // namespace

std::vector<DatasetListing> list_datasets() {
  std::vector<DatasetListing> out = {{"default", "default", "default", "The Jargon File (the default corpus)", 0}};
  // Tokenized text in the cache: trained on by naming its source again (a cache hit), or its shards when the
  // source is gone.
  const std::string cache = datasets_dir();
  for (const std::string& name : entries(cache)) {
    const std::string dir = cache + "/" + name;
    try {
      const nlohmann::json m = nlohmann::json::parse(read_file(dir + "/manifest.json"));
      const std::string source = m.value("source", "");
      const uint64_t tokens = m.value("tokens", uint64_t{0});
      if (source == "default") {
        out.front().tokens = tokens, out.front().description = m.value("description", out.front().description);
        continue;
      }
      out.push_back(
          {base_name(source), path_exists(source) ? source : dir, "cached", m.value("description", ""), tokens});
    } catch (const std::exception&) {
      // not a finished cache entry (the manifest is written last): not ready to train on
    }
  }
  // Prepared shards under data_dir()/datasets/NAME/.
  const std::string prepared = data_dir() + "/datasets";
  for (const std::string& name : entries(prepared)) {
    const std::string dir = prepared + "/" + name;
    uint64_t tokens = 0, shards = 0;
    for (const std::string& f : entries(dir))
      if (f.size() > 4 && f.compare(f.size() - 4, 4, ".bin") == 0) try {
          tokens += shard_token_count(dir + "/" + f), ++shards;
        } catch (const std::exception&) {}
    if (shards > 0)
      out.push_back(
          {name, dir, "shards",
           std::to_string(shards) + (shards == 1 ? " shard, " : " shards, ") + std::to_string(tokens) + " tokens",
           tokens});
  }
  return out;
}

}  // namespace tokamak
