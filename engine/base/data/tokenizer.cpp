// Encoding and decoding with GPT-2's byte-level BPE. The hot loop: PCRE2 cuts the next piece; a piece that is
// a token (most words) is one hash probe; other pieces are merged once per call and remembered, keyed by
// their bytes in the caller's text, so repeated rare words and numbers cost one probe afterwards.
// The loaders (tiktoken ranks, encoder.json + vocab.bpe) are in tokenizer_load.cpp.
#include "engine/base/data/tokenizer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "engine/base/data/bpe_utf8.h"
#include "engine/base/data/tokenizer_impl.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {

namespace {

const char kEndOfTextText[] = "<|endoftext|>";

// Piece bytes -> ids for pieces that needed merging. Keys point into the text being encoded, which outlives
// the cache, so nothing is copied; ids live in one pool.
class PieceCache {
 public:
  // Appends the cached ids of p[0..n) to out; false when not cached.
  bool append(const bpe::Key& k, std::vector<int32_t>& out) const {
    if (table_.empty()) return false;
    const auto tag = static_cast<uint32_t>(k.hash >> 32);
    for (size_t i = k.hash & (table_.size() - 1);; i = (i + 1) & (table_.size() - 1)) {
      const Entry& e = table_[i];
      if (!e.key) return false;
      if (e.tag == tag && e.len == k.n && bpe::equal_bytes(e.key, k.p, k.n)) {
        out.insert(out.end(), pool_.begin() + e.first, pool_.begin() + e.first + e.count);
        return true;
      }
    }
  }

  void insert(const bpe::Key& k, const int32_t* ids, size_t count) {
    if (used_ >= kMaxEntries) clear();  // bounds memory on huge inputs with endless distinct pieces
    if ((used_ + 1) * 2 > table_.size()) grow();
    size_t i = k.hash & (table_.size() - 1);
    while (table_[i].key) i = (i + 1) & (table_.size() - 1);
    table_[i] = Entry{k.p,
                      static_cast<uint32_t>(k.n),
                      static_cast<uint32_t>(k.hash >> 32),
                      static_cast<uint32_t>(pool_.size()),
                      static_cast<uint32_t>(count),
                      k.hash};
    pool_.insert(pool_.end(), ids, ids + count);
    ++used_;
  }

 private:
  static constexpr size_t kMaxEntries = size_t(1) << 20;
  struct Entry {
    const uint8_t* key = nullptr;  // nullptr: empty slot
    uint32_t len = 0, tag = 0, first = 0, count = 0;
    uint64_t hash = 0;  // kept so that growing does not rehash the bytes
  };

  void clear() {
    table_.assign(table_.size(), Entry{});
    pool_.clear();
    used_ = 0;
  }
  void grow() {
    std::vector<Entry> old = std::move(table_);
    table_.assign(std::max<size_t>(4096, old.size() * 2), Entry{});
    for (const Entry& e : old) {
      if (!e.key) continue;
      size_t i = e.hash & (table_.size() - 1);
      while (table_[i].key) i = (i + 1) & (table_.size() - 1);
      table_[i] = e;
    }
  }

  std::vector<Entry> table_;
  std::vector<int32_t> pool_;
  size_t used_ = 0;
};

// Encodes valid UTF-8. Stops early (leaving `out` incomplete) when *cancel becomes true.
void encode_clean(const bpe::RankTable& ranks, std::string_view text, bpe::Pretokenizer::Cursor& cursor,
                  PieceCache& cache, std::vector<int32_t>& out, const std::atomic<bool>* cancel = nullptr) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  size_t pos = 0;
  unsigned tick = 0;
  while (pos < text.size()) {
    if (cancel && (++tick & 1023) == 0 && cancel->load(std::memory_order_relaxed)) return;
    const size_t end = cursor.piece_end(text, pos);
    const uint8_t* p = s + pos;
    const size_t n = end - pos;
    pos = end;
    const bpe::Key key = bpe::make_key(p, n);
    const int32_t rank = ranks.find(key);
    if (rank >= 0) {
      out.push_back(rank);
      continue;
    }
    if (cache.append(key, out)) continue;
    const size_t before = out.size();
    ranks.merge(p, n, out);
    cache.insert(key, out.data() + before, out.size() - before);
  }
}

// A slice of the text for encode_parallel, with what encoding it produced.
struct Chunk {
  size_t begin = 0, end = 0;
  std::string fixed;  // the repaired text when the slice had invalid UTF-8 (cache keys point into it)
  size_t invalid = 0;
  std::vector<int32_t> ids;
};

std::vector<Chunk> plan_chunks(std::string_view text, int threads) {
  // Many more chunks than threads: even load, and progress that moves.
  const size_t target = std::clamp<size_t>(text.size() / (size_t(threads) * 16), size_t(64) << 10, size_t(8) << 20);
  std::vector<Chunk> chunks;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t cut = begin + target >= text.size() ? std::string_view::npos : bpe::next_safe_split(text, begin + target);
    Chunk c;
    c.begin = begin;
    c.end = cut == std::string_view::npos ? text.size() : cut;
    chunks.push_back(std::move(c));
    begin = chunks.back().end;
  }
  return chunks;
}

using ProgressFn = std::function<bool(size_t, size_t)>;

// On the calling thread, one chunk at a time, so progress and cancelling still work; straight into one
// vector (per-chunk vectors and their concatenation would touch twice the memory).
std::vector<int32_t> encode_here(const bpe::RankTable& ranks, const bpe::Pretokenizer& re, std::string_view text,
                                 std::vector<Chunk>& chunks, const ProgressFn& progress, size_t* invalid) {
  bpe::Pretokenizer::Cursor cursor(re);
  PieceCache cache;  // keys point into the text or into chunks' repaired copies, which outlive it
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 16);
  size_t done = 0;
  for (Chunk& c : chunks) {
    if (progress && !progress(done, text.size()))
      throw Cancelled("tokenizing was cancelled", "start it again; nothing half-written is kept");
    encode_clean(ranks, bpe::sanitize_utf8(text.substr(c.begin, c.end - c.begin), c.fixed, invalid), cursor, cache,
                 ids);
    done = c.end;
  }
  if (progress) progress(text.size(), text.size());
  return ids;
}

// On `workers` threads taking chunks in turn; the calling thread reports progress until they are done.
std::vector<int32_t> encode_threaded(const bpe::RankTable& ranks, const bpe::Pretokenizer& re, std::string_view text,
                                     std::vector<Chunk>& chunks, int workers, const ProgressFn& progress,
                                     size_t* invalid) {
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> cancel{false};
  std::mutex mutex;
  std::condition_variable wake;
  int finished = 0;
  std::exception_ptr failure;
  auto work = [&]() {
    bpe::Pretokenizer::Cursor cursor(re);
    PieceCache cache;  // one per thread, shared by its chunks
    for (size_t i; !cancel.load() && (i = next.fetch_add(1)) < chunks.size();) {
      Chunk& c = chunks[i];
      const std::string_view clean = bpe::sanitize_utf8(text.substr(c.begin, c.end - c.begin), c.fixed, &c.invalid);
      c.ids.reserve(clean.size() / 3 + 16);
      encode_clean(ranks, clean, cursor, cache, c.ids, &cancel);
      done.fetch_add(c.end - c.begin);
      wake.notify_one();
    }
  };
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure) failure = e;
    cancel = true;
  };
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w)
    pool.emplace_back([&]() {
      try {
        work();
      } catch (...) {
        fail(std::current_exception());
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++finished;
      wake.notify_one();
    });
  std::unique_lock<std::mutex> lock(mutex);
  while (finished < workers) {
    wake.wait_for(lock, std::chrono::milliseconds(50));
    if (cancel || !progress) continue;  // nothing to report: wait for the workers
    lock.unlock();                      // the caller's callback runs without our lock held, and may throw
    try {
      if (!progress(done.load(), text.size()))
        fail(std::make_exception_ptr(
            Cancelled("tokenizing was cancelled", "start it again; nothing half-written is kept")));
    } catch (...) {
      fail(std::current_exception());
    }
    lock.lock();
  }
  lock.unlock();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (progress) progress(text.size(), text.size());

  size_t total = 0;
  for (const Chunk& c : chunks) total += c.ids.size(), *invalid += c.invalid;
  std::vector<int32_t> ids;
  ids.reserve(total);
  for (Chunk& c : chunks) {
    ids.insert(ids.end(), c.ids.begin(), c.ids.end());
    std::vector<int32_t>().swap(c.ids);  // give memory back as we go
  }
  return ids;
}

}  // namespace

Tokenizer::Impl::Impl(const std::vector<std::string>& tokens, int32_t eot_id) : ranks(tokens), eot(eot_id) {
  vocab_size = std::max<int32_t>(ranks.size(), eot + 1);
  uint64_t h = fnv1a64(&eot, sizeof eot);
  for (const auto& t : tokens) {
    const auto len = static_cast<uint32_t>(t.size());
    h = fnv1a64(&len, sizeof len, h);  // the length keeps ("ab","c") apart from ("a","bc")
    h = fnv1a64(t.data(), t.size(), h);
  }
  fingerprint = h;
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const Tokenizer& Tokenizer::gpt2() {
  static const Tokenizer tokenizer = from_tiktoken(asset_path("gpt2.tiktoken"));
  return tokenizer;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, EncodeStats* stats) const {
  std::string fixed;
  size_t invalid = 0;
  const std::string_view clean = bpe::sanitize_utf8(text, fixed, &invalid);
  if (stats) stats->invalid_utf8 += invalid;
  std::vector<int32_t> ids;
  ids.reserve(clean.size() / 3 + 16);  // English prose is ~3.5-4.5 bytes per token
  bpe::Pretokenizer::Cursor cursor(impl_->pretokenizer);
  PieceCache cache;
  encode_clean(impl_->ranks, clean, cursor, cache, ids);
  return ids;
}

std::vector<int32_t> Tokenizer::encode_parallel(std::string_view text, int threads,
                                                const std::function<bool(size_t, size_t)>& progress,
                                                EncodeStats* stats) const {
  threads = std::max(1, threads);
  std::vector<Chunk> chunks = plan_chunks(text, threads);
  const int workers = std::min<int>(threads, static_cast<int>(chunks.size()));
  size_t invalid = 0;
  std::vector<int32_t> ids =
      workers <= 1 ? encode_here(impl_->ranks, impl_->pretokenizer, text, chunks, progress, &invalid)
                   : encode_threaded(impl_->ranks, impl_->pretokenizer, text, chunks, workers, progress, &invalid);
  if (stats) stats->invalid_utf8 += invalid;
  return ids;
}

std::string Tokenizer::token_bytes(int32_t id) const {
  if (id == impl_->eot) return kEndOfTextText;
  if (id < 0 || id >= impl_->ranks.size())
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                    std::to_string(impl_->vocab_size - 1) + ")",
                "ids must come from the GPT-2 tokenizer");
  return std::string(impl_->ranks.bytes(id));
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  out.reserve(ids.size() * 5);
  for (int32_t id : ids) {
    if (id >= 0 && id < impl_->ranks.size() && id != impl_->eot) {
      const std::string_view b = impl_->ranks.bytes(id);
      out.append(b.data(), b.size());
    } else {
      out += token_bytes(id);  // <|endoftext|>, or the error for an unknown id
    }
  }
  return out;
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

uint64_t Tokenizer::fingerprint() const { return impl_->fingerprint; }

}  // namespace tokamak
