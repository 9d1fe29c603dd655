// The rank table and tiktoken's byte_pair_merge. Short pieces use tiktoken's own O(n²) scan (fastest for
// the few bytes a word has); long ones (runs of spaces, rules of '=' or '-') use a heap with the same
// tie-break, so a pathological piece costs O(n log n) instead of O(n²) but yields the same tokens.
#include "engine/base/data/bpe_ranks.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <queue>

namespace tokamak::bpe {

namespace {
constexpr int32_t kNone = INT32_MAX;  // "this pair is not a token"
constexpr size_t kShortPiece = 64;    // longest piece merged by the quadratic scan
}  // namespace

RankTable::RankTable(const std::vector<std::string>& tokens) {
  offsets_.reserve(tokens.size() + 1);
  size_t total = 0;
  for (const auto& t : tokens) total += t.size();
  arena_.reserve(total);
  offsets_.push_back(0);
  for (const auto& t : tokens) {
    arena_ += t;
    offsets_.push_back(static_cast<uint32_t>(arena_.size()));
  }
  size_t capacity = 16;
  while (capacity * 2 < tokens.size() * 5) capacity *= 2;  // load factor <= 0.4: probes stay ~1
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
  for (int32_t r = 0; r < static_cast<int32_t>(tokens.size()); ++r) {
    const Key k = make_key(reinterpret_cast<const uint8_t*>(tokens[r].data()), tokens[r].size());
    if (k.n > UINT16_MAX) continue;  // cannot be a piece's token in practice; left out rather than truncated
    if (find(k) >= 0) {
      if (first_duplicate_ < 0) first_duplicate_ = r;
      continue;
    }
    uint64_t i = k.hash & mask_;
    while (slots_[i].rank >= 0) i = (i + 1) & mask_;
    slots_[i] = Slot{k.head, static_cast<uint16_t>(k.n), static_cast<uint16_t>(k.hash >> 48), r};
  }
}

void RankTable::merge(const uint8_t* p, size_t n, std::vector<int32_t>& out) const {
  if (n == 0) return;
  if (n == 1) {
    out.push_back(find(p, 1));
    return;
  }
  if (n <= kShortPiece) merge_short(p, n, out);
  else merge_long(p, n, out);
}

// tiktoken's _byte_pair_merge, on stack arrays: part i starts at start[i]; rank[i] is the rank of part i
// merged with part i + 1. After each merge only the two ranks next to it change.
void RankTable::merge_short(const uint8_t* p, size_t n, std::vector<int32_t>& out) const {
  uint32_t start[kShortPiece + 1];
  int32_t rank[kShortPiece + 1];
  size_t parts = n + 1;  // the last entry is the end sentinel
  auto rank_of = [&](size_t from, size_t to) {
    const int32_t r = find(p + from, to - from);
    return r < 0 ? kNone : r;
  };
  for (size_t i = 0; i + 1 < n; ++i) {
    start[i] = static_cast<uint32_t>(i);
    rank[i] = rank_of(i, i + 2);
  }
  start[n - 1] = static_cast<uint32_t>(n - 1);
  rank[n - 1] = kNone;
  start[n] = static_cast<uint32_t>(n);
  rank[n] = kNone;
  // The rank of part i merged with its right neighbour, as if part i + 1 were already gone.
  auto rank_after = [&](size_t i) { return i + 3 < parts ? rank_of(start[i], start[i + 3]) : kNone; };
  for (;;) {
    int32_t best = kNone;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts; ++i)
      if (rank[i] < best) best = rank[i], at = i;  // strict <: leftmost wins ties, as tiktoken
    if (best == kNone) break;
    if (at > 0) rank[at - 1] = rank_after(at - 1);
    rank[at] = rank_after(at);
    std::copy(start + at + 2, start + parts, start + at + 1);
    std::copy(rank + at + 2, rank + parts, rank + at + 1);
    --parts;
  }
  for (size_t i = 0; i + 1 < parts; ++i) out.push_back(find(p + start[i], start[i + 1] - start[i]));
}

// The same merges with a linked list of parts (a part is named by the byte it starts at) and a min-heap of
// (rank, start): the heap's order is tiktoken's order, lowest rank then leftmost. Stale heap entries are
// skipped when their rank no longer matches the part's current one.
void RankTable::merge_long(const uint8_t* p, size_t n, std::vector<int32_t>& out) const {
  std::vector<uint32_t> next(n), prev(n);
  std::vector<int32_t> rank(n, kNone);
  std::vector<uint64_t> heap_storage;
  heap_storage.reserve(n);
  std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> heap(std::greater<uint64_t>(),
                                                                                    std::move(heap_storage));
  auto rank_of = [&](size_t from, size_t to) {
    const int32_t r = find(p + from, to - from);
    return r < 0 ? kNone : r;
  };
  auto push = [&](uint32_t i) {
    if (rank[i] != kNone) heap.push((uint64_t(uint32_t(rank[i])) << 32) | i);
  };
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;  // n marks the end
    prev[i] = i - 1;  // wraps for i == 0; never read there
  }
  for (uint32_t i = 0; i + 1 < n; ++i) {
    rank[i] = rank_of(i, i + 2);
    push(i);
  }
  while (!heap.empty()) {
    const uint64_t top = heap.top();
    heap.pop();
    const auto i = static_cast<uint32_t>(top & 0xFFFFFFFFu);
    const auto r = static_cast<int32_t>(top >> 32);
    if (rank[i] != r || next[i] >= n) continue;  // stale: i changed, or was merged into its left part
    const uint32_t gone = next[i];
    const uint32_t after = next[gone];
    next[i] = after;
    if (after < n) prev[after] = i;
    rank[gone] = kNone;
    next[gone] = static_cast<uint32_t>(n);  // marks it dead for stale entries
    rank[i] = after < n ? rank_of(i, next[after]) : kNone;
    push(i);
    if (i > 0) {
      const uint32_t left = prev[i];
      rank[left] = rank_of(left, after);
      push(left);
    }
  }
  for (uint32_t i = 0; i < n; i = next[i]) out.push_back(find(p + i, next[i] - i));
}

}  // namespace tokamak::bpe
