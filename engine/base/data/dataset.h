// Data sources resolved to token shards. Text (the default corpus, a file, a folder of files) is tokenized
// once into llm.c-format shards in a cache keyed by content and tokenizer, so a second run starts at once;
// existing .bin shards (a file, a folder, or a glob) are used as they are.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

struct PreparedDataset {
  std::string source;                     // what the user named ("default" for the built-in corpus)
  std::string description;                // one line: "jargon.txt: 1.7 MB text → 410,123 tokens (cached)"
  std::vector<std::string> train_shards;  // paths of llm.c-format .bin shards
  std::vector<std::string> val_shards;    // the *_val_* shards when the source had them, else empty
  uint64_t train_tokens = 0;
  uint64_t val_tokens = 0;
  // One line each, for the user: skipped folder entries, invalid UTF-8 replaced while tokenizing ("'a.txt': 3
  // invalid UTF-8 sequences replaced by U+FFFD"). Kept in the cache's manifest, so a cached dataset says it too.
  std::vector<std::string> warnings;
};

// Called with (done, total) units of work (bytes of text while tokenizing); return false to cancel.
using Progress = std::function<bool(uint64_t done, uint64_t total)>;

// "" or "default" is the default corpus. Throws tokamak::Error naming the path and the problem: missing path,
// empty file, no text or shard files in a folder, a shard with a bad magic/version or a truncated body, a
// malformed line of a JSON-lines file (naming the line). jsonl_field: the field of FILE.jsonl's lines holding each
// document (data.jsonl_field), part of the cache key; the documents are held in memory while tokenized (once).
PreparedDataset prepare_dataset(const std::string& source, const Progress& progress = {},
                                const std::string& jsonl_field = "text");

// `tokamak tokenize --prepare SOURCE --out DIR`: writes the shards of SOURCE into DIR (train_*.bin and,
// when val_fraction > 0, a val_*.bin made of the last fraction of the tokens). Returns what was written.
// The shards are built in a temporary sibling folder and swapped in with one rename, so DIR holds either its
// old shards or the new ones, never a mix, whenever the process is stopped. A DIR that holds anything but
// shards is refused (the swap would drop those files).
// progress is called while tokenizing (bytes) and then while writing (tokens); returning false cancels and
// leaves DIR as it was. max_shard_tokens: llm.c's 100M unless a test wants many small shards.
PreparedDataset prepare_dataset_into(const std::string& source, const std::string& out_dir, double val_fraction,
                                     const Progress& progress = {}, uint64_t max_shard_tokens = 100'000'000);

// Every token id of every shard must be below the model's vocabulary: an id at or above it (shards from another
// tokenizer, a too-small model.vocab_size) would fail deep inside the embedding ("index out of range in self",
// or a device-side assert that poisons the CUDA context). Throws an Error naming the shard, the first bad id
// and its position, and the vocabulary. Reads the shards once through mmap (about 10 GB/s).
void check_token_ids(const PreparedDataset& data, int64_t vocab_size);

}  // namespace tokamak
