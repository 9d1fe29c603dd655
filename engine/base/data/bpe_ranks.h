// The BPE vocabulary as the encoder's hot loop needs it: token bytes in one arena, a flat open-addressing
// table from bytes to rank, and tiktoken's lowest-rank-first merge of a piece that is not itself a token.
// Internal to engine/base/data (the tokenizer's implementation); nothing else should include it.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace tokamak::bpe {

// The first (up to) 8 bytes of a string as one word, zero-padded: most tokens fit in it whole, so a probe
// compares them without touching the token arena.
inline uint64_t head_word(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  if (n >= 8) {
    std::memcpy(&v, p, 8);
    return v;
  }
  // A switch on the length keeps this free of a variable-length memcpy call.
  switch (n) {
    case 7:
      v |= uint64_t(p[6]) << 48;
      [[fallthrough]];
    case 6:
      v |= uint64_t(p[5]) << 40;
      [[fallthrough]];
    case 5:
      v |= uint64_t(p[4]) << 32;
      [[fallthrough]];
    case 4:
      v |= uint64_t(p[3]) << 24;
      [[fallthrough]];
    case 3:
      v |= uint64_t(p[2]) << 16;
      [[fallthrough]];
    case 2:
      v |= uint64_t(p[1]) << 8;
      [[fallthrough]];
    case 1:
      v |= uint64_t(p[0]);
      break;
    default:
      break;
  }
  return v;
}

// A byte string prepared for lookups: its head word and a fast hash (not cryptographic, not stable across
// versions: only used in memory).
struct Key {
  const uint8_t* p;
  size_t n;
  uint64_t head;
  uint64_t hash;
};

inline Key make_key(const uint8_t* p, size_t n) {
  const uint64_t head = head_word(p, n);
  uint64_t h = (0x9E3779B97F4A7C15ULL ^ (n * 0xFF51AFD7ED558CCDULL) ^ head) * 0xBF58476D1CE4E5B9ULL;
  for (size_t i = 8; i < n; i += 8) {
    h ^= h >> 29;
    h = (h ^ head_word(p + i, n - i)) * 0xBF58476D1CE4E5B9ULL;
  }
  h ^= h >> 31;
  h *= 0x94D049BB133111EBULL;
  return Key{p, n, head, h ^ (h >> 32)};
}

// Equality of two byte strings of length n, inlined: pieces are short, and a call to memcmp per probe was a
// sixth of the encoder's time.
inline bool equal_bytes(const uint8_t* a, const uint8_t* b, size_t n) {
  if (n >= 8) {
    uint64_t x, y;
    for (size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) return false;
    }
    std::memcpy(&x, a + n - 8, 8);  // the tail, overlapping the last whole word
    std::memcpy(&y, b + n - 8, 8);
    return x == y;
  }
  if (n >= 4) {
    uint32_t x0, y0, x1, y1;
    std::memcpy(&x0, a, 4), std::memcpy(&y0, b, 4);
    std::memcpy(&x1, a + n - 4, 4), std::memcpy(&y1, b + n - 4, 4);
    return x0 == y0 && x1 == y1;
  }
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

class RankTable {
 public:
  RankTable() = default;
  // tokens[rank] = the bytes of that token; ranks must be unique (the loaders check that).
  explicit RankTable(const std::vector<std::string>& tokens);

  int32_t size() const { return static_cast<int32_t>(offsets_.size()) - 1; }
  std::string_view bytes(int32_t rank) const {
    return std::string_view(arena_.data() + offsets_[rank], offsets_[rank + 1] - offsets_[rank]);
  }
  // The rank of the key's bytes, or -1. One cache line per probe for tokens of up to 8 bytes.
  int32_t find(const Key& k) const {
    const auto tag = static_cast<uint16_t>(k.hash >> 48);
    for (uint64_t i = k.hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.rank < 0) return -1;
      if (s.head == k.head && s.len == k.n && s.tag == tag &&
          (k.n <= 8 ||
           equal_bytes(reinterpret_cast<const uint8_t*>(arena_.data()) + offsets_[s.rank] + 8, k.p + 8, k.n - 8)))
        return s.rank;
    }
  }
  int32_t find(const uint8_t* p, size_t n) const { return find(make_key(p, n)); }
  // The first rank whose bytes repeat an earlier token's, or -1: a vocabulary with one is unusable.
  int32_t first_duplicate() const { return first_duplicate_; }

  // Appends the ranks of a piece that is not a single token, merged exactly as tiktoken's byte_pair_merge:
  // repeatedly the adjacent pair whose concatenation has the lowest rank, leftmost on ties.
  void merge(const uint8_t* p, size_t n, std::vector<int32_t>& out) const;

 private:
  struct Slot {
    uint64_t head = 0;  // head_word of the token
    uint16_t len = 0;   // longer tokens are not in the table (none is near this)
    uint16_t tag = 0;   // top bits of the hash: rejects most wrong probes on long tokens
    int32_t rank = -1;  // -1: empty
  };
  void merge_short(const uint8_t* p, size_t n, std::vector<int32_t>& out) const;
  void merge_long(const uint8_t* p, size_t n, std::vector<int32_t>& out) const;

  std::string arena_;              // all token bytes, in rank order
  std::vector<uint32_t> offsets_;  // (size + 1): token r is arena_[offsets_[r], offsets_[r + 1])
  std::vector<Slot> slots_;        // power-of-two open-addressing table, load <= 0.4 (16 B a slot)
  uint64_t mask_ = 0;
  int32_t first_duplicate_ = -1;
};

}  // namespace tokamak::bpe
