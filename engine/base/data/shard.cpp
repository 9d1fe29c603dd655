// llm.c shard files: atomic writes, header validation with messages that say which file is wrong and how,
// and read-only memory maps.
#include "engine/base/data/shard.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <utility>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace {

const char* kRewriteHint = "prepare the shard again (tokamak tokenize --prepare) or copy it again in full";

// An open file descriptor that closes itself on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens path, checks the header against the file size, and returns the size and token count.
void open_and_validate(const std::string& path, Fd& f, size_t& file_bytes, uint64_t& count) {
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0)
    throw Error("cannot open shard '" + path + "': " + std::strerror(errno), "check the path and its permissions");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    throw Error("cannot stat shard '" + path + "': " + std::strerror(errno), "check the path and its permissions");
  file_bytes = static_cast<size_t>(st.st_size);
  if (file_bytes < kShardHeaderBytes)
    throw Error("shard '" + path + "' is truncated: " + std::to_string(file_bytes) +
                    " bytes, shorter than the 1024-byte header",
                kRewriteHint);
  int32_t header[kShardHeaderInts];
  ssize_t got = ::pread(f.fd, header, kShardHeaderBytes, 0);
  if (got != static_cast<ssize_t>(kShardHeaderBytes))
    throw Error("cannot read the header of shard '" + path + "'", "check that the file is readable");
  if (header[0] != kShardMagic)
    throw Error("shard '" + path + "' has a bad magic number " + std::to_string(header[0]) + " (expected " +
                    std::to_string(kShardMagic) + "): not an llm.c token shard",
                "give text files a name that does not end in .bin, or prepare shards with tokamak tokenize --prepare");
  if (header[1] != kShardVersion)
    throw Error("shard '" + path + "' has an unsupported version " + std::to_string(header[1]) +
                    " (expected 1: uint16 GPT-2 tokens)",
                "write the shard with llm.c's version 1 format, or tokenize the text with tokamak tokenize --prepare");
  if (header[2] < 0)
    throw Error("shard '" + path + "' has a negative token count " + std::to_string(header[2]), kRewriteHint);
  count = static_cast<uint64_t>(header[2]);
  uint64_t need = kShardHeaderBytes + count * sizeof(uint16_t);
  if (file_bytes < need)
    throw Error("shard '" + path + "' is truncated: its header promises " + std::to_string(count) + " tokens (" +
                    std::to_string(need) + " bytes) but the file has " + std::to_string(file_bytes) + " bytes",
                kRewriteHint);
}

void write_fully(std::FILE* out, const void* data, size_t bytes, const std::string& path) {
  if (bytes && std::fwrite(data, 1, bytes, out) != bytes)
    throw Error("cannot write shard '" + path + "': " + std::strerror(errno), "free some disk space and try again");
}

}  // namespace

void write_shard(const std::string& path, const uint16_t* tokens, size_t count) {
  if (count > static_cast<size_t>(INT32_MAX))
    throw Error(
        "shard '" + path + "' would hold " + std::to_string(count) + " tokens, more than its int32 count allows",
        "split the tokens into shards of at most 100M tokens");
  write_atomically(path, [&](const std::string& tmp) {
    std::FILE* out = std::fopen(tmp.c_str(), "wb");
    if (!out)
      throw Error("cannot write shard '" + path + "': " + std::strerror(errno), "check that its folder is writable");
    try {
      int32_t header[kShardHeaderInts] = {kShardMagic, kShardVersion, static_cast<int32_t>(count)};
      write_fully(out, header, sizeof header, path);
      write_fully(out, tokens, count * sizeof(uint16_t), path);
      if (std::fflush(out) != 0)
        throw Error("cannot write shard '" + path + "': " + std::strerror(errno), "free some disk space and try again");
    } catch (...) {
      std::fclose(out);
      throw;
    }
    if (std::fclose(out) != 0)
      throw Error("cannot write shard '" + path + "': " + std::strerror(errno), "free some disk space and try again");
  });
}

void write_shard(const std::string& path, const std::vector<uint16_t>& tokens) {
  write_shard(path, tokens.data(), tokens.size());
}

void write_shard(const std::string& path, const std::vector<int32_t>& tokens) {
  std::vector<uint16_t> narrow(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] > 0xFFFF)
      throw Error("token id " + std::to_string(tokens[i]) + " does not fit the uint16 shard '" + path + "'",
                  "llm.c shards hold vocabularies of at most 65536 tokens, as GPT-2's 50257");
    narrow[i] = static_cast<uint16_t>(tokens[i]);
  }
  write_shard(path, narrow);
}

uint64_t shard_token_count(const std::string& path) {
  Fd f;
  size_t bytes = 0;
  uint64_t count = 0;
  open_and_validate(path, f, bytes, count);
  return count;
}

bool looks_like_shard(const std::string& path) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int32_t magic = 0;
  return f.fd >= 0 && ::pread(f.fd, &magic, sizeof magic, 0) == sizeof magic && magic == kShardMagic;
}

MappedShard::MappedShard(const std::string& path) : path_(path) {
  Fd f;
  size_t bytes = 0;
  open_and_validate(path, f, bytes, count_);
  void* p = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, f.fd, 0);
  if (p == MAP_FAILED)
    throw Error("cannot memory-map shard '" + path + "': " + std::strerror(errno),
                "check free address space and that the file system supports mmap");
  map_ = p;
  map_bytes_ = bytes;
  tokens_ = reinterpret_cast<const uint16_t*>(static_cast<const char*>(p) + kShardHeaderBytes);
}

MappedShard::MappedShard(MappedShard&& other) noexcept { *this = std::move(other); }

MappedShard& MappedShard::operator=(MappedShard&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    map_ = std::exchange(other.map_, nullptr);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
    tokens_ = std::exchange(other.tokens_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

MappedShard::~MappedShard() { release(); }

void MappedShard::release() {
  if (map_) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  tokens_ = nullptr;
}

std::vector<uint16_t> read_shard(const std::string& path) {
  MappedShard m(path);
  return std::vector<uint16_t>(m.tokens(), m.tokens() + m.size());
}

std::string shard_name(const std::string& prefix, size_t index) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06zu", index);
  return prefix + "_" + digits + ".bin";
}

ShardWriter::ShardWriter(std::string dir, std::string prefix, uint64_t max_tokens)
    : dir_(std::move(dir)), prefix_(std::move(prefix)), max_tokens_(max_tokens ? max_tokens : kMaxShardTokens) {}

void ShardWriter::add(const int32_t* tokens, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (tokens[i] < 0 || tokens[i] > 0xFFFF)
      throw Error("token id " + std::to_string(tokens[i]) + " does not fit an llm.c shard (uint16)",
                  "llm.c shards hold vocabularies of at most 65536 tokens, as GPT-2's 50257");
    buffer_.push_back(static_cast<uint16_t>(tokens[i]));
    if (buffer_.size() >= max_tokens_) flush();
  }
  total_ += count;
}

void ShardWriter::add(const uint16_t* tokens, size_t count) {
  while (count) {
    size_t take = std::min<size_t>(count, max_tokens_ - buffer_.size());
    buffer_.insert(buffer_.end(), tokens, tokens + take);
    tokens += take;
    count -= take;
    total_ += take;
    if (buffer_.size() >= max_tokens_) flush();
  }
}

void ShardWriter::flush() {
  if (buffer_.empty()) return;
  std::string path = dir_ + "/" + shard_name(prefix_, paths_.size());
  write_shard(path, buffer_);
  paths_.push_back(path);
  buffer_.clear();
}

const std::vector<std::string>& ShardWriter::finish() {
  flush();
  return paths_;
}

}  // namespace tokamak
