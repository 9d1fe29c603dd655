// llm.c token shards: a header of 256 int32 (magic 20240520, version 1, token count, the rest zero) followed
// by the tokens as uint16. Shards are written atomically and read through mmap, so a 100M-token shard costs
// no copy and only the pages a batch touches are read from disk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

constexpr int32_t kShardMagic = 20240520;
constexpr int32_t kShardVersion = 1;
constexpr size_t kShardHeaderInts = 256;
constexpr size_t kShardHeaderBytes = kShardHeaderInts * sizeof(int32_t);
// llm.c and the FineWeb scripts write at most 100M tokens per shard; so do we.
constexpr uint64_t kMaxShardTokens = 100'000'000;

// Writes tokens to path (temporary name, then rename). Token ids must fit in uint16; ids from int32 vectors
// are checked and an id >= 65536 is an Error (a vocabulary too large for the format).
void write_shard(const std::string& path, const uint16_t* tokens, size_t count);
void write_shard(const std::string& path, const std::vector<uint16_t>& tokens);
void write_shard(const std::string& path, const std::vector<int32_t>& tokens);

// Reads and validates only the header (magic, version, file long enough for the count); returns the count.
uint64_t shard_token_count(const std::string& path);
// True when the file starts with the shard magic (used to tell shards from text without trusting names).
bool looks_like_shard(const std::string& path);

// A read-only memory map of one validated shard. Move-only; unmaps on destruction.
class MappedShard {
 public:
  explicit MappedShard(const std::string& path);
  MappedShard(MappedShard&& other) noexcept;
  MappedShard& operator=(MappedShard&& other) noexcept;
  MappedShard(const MappedShard&) = delete;
  MappedShard& operator=(const MappedShard&) = delete;
  ~MappedShard();

  const uint16_t* tokens() const { return tokens_; }
  uint64_t size() const { return count_; }
  const std::string& path() const { return path_; }

 private:
  void release();
  std::string path_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const uint16_t* tokens_ = nullptr;
  uint64_t count_ = 0;
};

// The whole shard copied into memory (tests, small tools).
std::vector<uint16_t> read_shard(const std::string& path);

// Streams tokens into numbered shards DIR/PREFIX_000000.bin, ... of at most max_tokens each, so a dataset
// larger than memory-friendly sizes is never held whole. finish() writes the last partial shard.
class ShardWriter {
 public:
  ShardWriter(std::string dir, std::string prefix, uint64_t max_tokens = kMaxShardTokens);
  void add(const int32_t* tokens, size_t count);
  void add(const uint16_t* tokens, size_t count);
  void add(int32_t token) { add(&token, 1); }
  // Writes what is buffered; returns the paths of all shards written, in order.
  const std::vector<std::string>& finish();
  uint64_t tokens() const { return total_; }

 private:
  void flush();
  std::string dir_, prefix_;
  uint64_t max_tokens_;
  std::vector<uint16_t> buffer_;
  std::vector<std::string> paths_;
  uint64_t total_ = 0;
};

// "train_000003.bin" style names: PREFIX_ and six digits.
std::string shard_name(const std::string& prefix, size_t index);

}  // namespace tokamak
