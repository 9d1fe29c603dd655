// The datasets a machine has ready to train on, for a picker (`tokamak datasets --json`; the studio runs it on
// an SSH host, whose data paths are not this machine's): the default corpus, every text source already
// tokenized in the dataset cache (datasets_dir(): its manifest says what and how many tokens), and the folders
// of token shards under data_dir()/datasets/ (where `tokamak tokenize --prepare DATA --out` can put them).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct DatasetListing {
  std::string name;         // a short name: the file or folder name, "default"
  std::string path;         // the value of data.path that trains on it
  std::string kind;         // default | cached (tokenized text) | shards
  std::string description;  // one line: the cache's description, or "N shards, T tokens"
  uint64_t tokens = 0;      // 0 when not known yet (the default corpus before its first tokenization)
};

// Never throws: an unreadable manifest or shard is left out.
std::vector<DatasetListing> list_datasets();

}  // namespace tokamak
