// The token-shard datasets people train GPT-2 on, as their Hub pages and the scripts that fetch them name
// their files (docs/DATASETS.md has the sizes). Each is llm.c's format: a 1024-byte header, then uint16
// GPT-2 tokens, 10^8 tokens (200,001,024 bytes) a shard; one validation shard, train shards numbered from 1.
// `hf:OWNER/REPO[:GLOB]` names any other Hub dataset; its files are listed by the Hub's tree API.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct HubCatalogEntry {
  std::string name;          // what `tokamak datasets get` and data.path call it: "fineweb10B"
  std::string repo;          // the Hub dataset: "kjj0/fineweb10B-gpt2"
  std::string val_file;      // "fineweb_val_000000.bin"
  std::string train_prefix;  // "fineweb_train_": shards are PREFIX000001.bin … (six digits)
  int train_shards = 0;      // how many there are
  uint64_t shard_tokens = 100'000'000;
  std::string about;  // one line: what it is, and where the numbers come from
};

const std::vector<HubCatalogEntry>& hub_catalog();
// nullptr when NAME is not in the catalog.
const HubCatalogEntry* find_hub_dataset(const std::string& name);

// What `tokamak datasets get NAME` fetches, before any request: the repo, the local folder's name, and the
// files (known for a catalog entry; for hf:REPO:GLOB only the glob, the files come from the Hub's listing).
struct HubSelection {
  std::string name;  // the local folder under data_dir()/datasets/
  std::string repo;
  std::vector<std::string> files;  // catalog: the val shard, then the train shards wanted
  std::string glob;                // hf: the pattern over the repo's top-level file names
  bool listed = false;             // true: files come from the Hub's listing (hf:)
  int64_t shards = -1;             // hf: how many train files to keep (-1 = all)
  uint64_t tokens = 0;             // hf: keep train .bin files until this many tokens (0 = all)
};

// NAME: a catalog name or hf:OWNER/REPO[:GLOB]. SHARDS (-1 = all) or TOKENS (0 = all) take a prefix of the
// train shards; the validation shard always comes along. Errors name the dataset and what is known.
HubSelection select_hub_dataset(const std::string& name, int64_t shards, uint64_t tokens);

// "2B", "500M", "1.5e9", "100000" → tokens; an Error naming TEXT otherwise.
uint64_t parse_token_amount(const std::string& text);

}  // namespace tokamak
