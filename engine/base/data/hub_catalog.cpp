// The catalog and the selection of files (see hub_catalog.h).
#include "engine/base/data/hub_catalog.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "engine/base/util/error.h"

namespace tokamak {
namespace {

std::string numbered(const std::string& prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06d", i);
  return prefix + buf + ".bin";
}

std::string catalog_names() {
  std::string s;
  for (const HubCatalogEntry& e : hub_catalog()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

}  // namespace

const std::vector<HubCatalogEntry>& hub_catalog() {
  // Counts as the fetch scripts of modded-nanogpt (data/cached_fineweb10B.py, cached_finewebedu10B.py) and
  // llm.c (dev/data/edu_fineweb.sh) name them; the sizes each file has come from the Hub when it is fetched.
  static const std::vector<HubCatalogEntry> catalog = {
      {"fineweb10B", "kjj0/fineweb10B-gpt2", "fineweb_val_000000.bin", "fineweb_train_", 103, 100'000'000,
       "FineWeb's 10B-token sample in GPT-2 tokens: the modded-nanogpt speedrun's data (val: its first shard)"},
      {"finewebedu10B", "kjj0/finewebedu10B-gpt2", "finewebedu_val_000000.bin", "finewebedu_train_", 99, 100'000'000,
       "FineWeb-Edu's 10B-token sample in GPT-2 tokens (the last train shard is about half full)"},
      {"fineweb-edu-100B", "karpathy/fineweb-edu-100B-gpt2-token-shards", "edu_fineweb_val_000000.bin",
       "edu_fineweb_train_", 1001, 100'000'000, "FineWeb-Edu's 100B-token sample in GPT-2 tokens: llm.c's GPT-2 runs"},
  };
  return catalog;
}

const HubCatalogEntry* find_hub_dataset(const std::string& name) {
  for (const HubCatalogEntry& e : hub_catalog())
    if (e.name == name) return &e;
  return nullptr;
}

uint64_t parse_token_amount(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  double scale = 1;
  const std::string unit = end ? std::string(end) : std::string();
  if (unit == "K" || unit == "k") scale = 1e3;
  else if (unit == "M" || unit == "m") scale = 1e6;
  else if (unit == "B" || unit == "b" || unit == "G") scale = 1e9;
  else if (unit == "T") scale = 1e12;
  else if (!unit.empty()) end = nullptr;
  if (text.empty() || !end || !(v > 0) || !std::isfinite(v * scale) || v * scale > 1e18)
    throw Error("--tokens '" + text + "' is not an amount of tokens", "give a number with K, M or B: 500M, 2B");
  return static_cast<uint64_t>(std::ceil(v * scale));
}

// The Hub's own rule for an owner or a dataset name (huggingface_hub's validate_repo_id): letters, digits, '-',
// '_' and '.', neither "--" nor "..", no '-' or '.' at either end, at most 96 characters. "" when NAME keeps it.
static std::string hub_name_problem(const std::string& part) {
  if (part.empty() || part.size() > 96) return "has " + std::to_string(part.size()) + " characters, not 1 to 96";
  for (char c : part)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return "holds '" + std::string(1, c) + "'";
  if (part.find("--") != std::string::npos || part.find("..") != std::string::npos) return "holds \"--\" or \"..\"";
  if (part.front() == '-' || part.front() == '.' || part.back() == '-' || part.back() == '.')
    return "starts or ends with '-' or '.'";
  return {};
}

HubSelection select_hub_dataset(const std::string& name, int64_t shards, uint64_t tokens) {
  if (shards == 0 || shards < -1)
    throw Error("--shards " + std::to_string(shards) + " fetches no training data", "give 1 or more");
  HubSelection s;
  if (name.rfind("hf:", 0) == 0) {
    const std::string spec = name.substr(3);
    const size_t colon = spec.find(':');
    s.repo = spec.substr(0, colon);
    s.glob = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
    const size_t slash = s.repo.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == s.repo.size() ||
        s.repo.find('/', slash + 1) != std::string::npos || s.repo.find("..") != std::string::npos)
      throw Error("'" + name + "' does not name a Hub dataset", "write hf:OWNER/REPO or hf:OWNER/REPO:GLOB");
    for (const std::string& part : {s.repo.substr(0, slash), s.repo.substr(slash + 1)})
      if (const std::string problem = hub_name_problem(part); !problem.empty())
        throw Error("'" + name + "' does not name a Hub dataset: '" + part + "' " + problem,
                    "Hub names are letters, digits, '-', '_' and '.', without \"--\" or \"..\"");
    if (colon != std::string::npos && s.glob.empty())
      throw Error("'" + name + "' has an empty pattern after ':'", "leave it out for every file, or give one: *.bin");
    // Owner and name both: another owner's repo of the same name, or a catalog name, is another folder. The Hub
    // forbids "--" in names, so OWNER--REPO names one repo only.
    s.name = s.repo.substr(0, slash) + "--" + s.repo.substr(slash + 1);
    s.listed = true, s.shards = shards, s.tokens = tokens;
    return s;
  }
  const HubCatalogEntry* e = find_hub_dataset(name);
  if (!e)
    throw Error("'" + name + "' is not a dataset Tokamak knows how to get",
                "the catalog has " + catalog_names() + "; any Hub dataset of llm.c shards is hf:OWNER/REPO[:GLOB]");
  int n = e->train_shards;
  if (tokens > 0) n = static_cast<int>(std::min<uint64_t>((tokens + e->shard_tokens - 1) / e->shard_tokens, n));
  if (shards > 0) {
    if (shards > e->train_shards)
      throw Error(name + " has " + std::to_string(e->train_shards) + " train shards, not " + std::to_string(shards),
                  "give --shards " + std::to_string(e->train_shards) + " or fewer");
    n = static_cast<int>(shards);
  }
  s.name = e->name, s.repo = e->repo;
  s.files.push_back(e->val_file);
  for (int i = 1; i <= n; ++i) s.files.push_back(numbered(e->train_prefix, i));
  return s;
}

}  // namespace tokamak
