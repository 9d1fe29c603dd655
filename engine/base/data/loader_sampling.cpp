// Window sampling for the loader: the split, the seeded draw and the rank slices (see loader.cpp's header).
#include "engine/base/data/loader_sampling.h"

#include <algorithm>
#include <cmath>

#include "engine/base/util/error.h"

namespace tokamak {

uint64_t splitmix_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t splitmix_seed(uint64_t seed, std::initializer_list<uint64_t> parts) {
  // Chained so that (1, 2) and (2, 1) give unrelated streams.
  uint64_t h = seed;
  for (uint64_t p : parts) {
    uint64_t s = h ^ (p * 0xD6E8FEB86659FD93ULL);
    h = splitmix_next(s);
  }
  return h;
}

namespace {

// floor(a * b / c) without overflow, for slicing start indices among ranks.
uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b / c);
}

// Cuts the last n_val tokens of train into val, splitting the segment the border falls in.
void split_tail(std::vector<Segment>& train, std::vector<Segment>& val, uint64_t n_val) {
  std::vector<Segment> keep;
  uint64_t total = 0;
  for (const auto& s : train) total += s.size;
  uint64_t border = total - n_val, pos = 0;
  for (const auto& s : train) {
    if (pos + s.size <= border) {
      keep.push_back(s);
    } else if (pos >= border) {
      val.push_back(s);
    } else {
      keep.push_back({s.data, border - pos});
      val.push_back({s.data + (border - pos), s.size - (border - pos)});
    }
    pos += s.size;
  }
  train = std::move(keep);
}

uint64_t total_of(const std::vector<Segment>& v) {
  uint64_t n = 0;
  for (const auto& s : v) n += s.size;
  return n;
}

}  // namespace

WindowSampler::WindowSampler(const std::string& name, std::vector<Segment> train, std::vector<Segment> val,
                             const SamplerOptions& options)
    : opt_(options), train_(std::move(train)), val_(std::move(val)) {
  const uint64_t T = static_cast<uint64_t>(opt_.context), W = T + 1;
  const std::string window = "one window of " + std::to_string(W) + " (model.context + 1)";
  const uint64_t all = total_of(train_) + total_of(val_);
  if (all < W)
    throw Error("dataset " + name + " has " + std::to_string(all) + " tokens, fewer than " + window,
                "use a longer text or a smaller model.context");

  bool tail = val_.empty() && opt_.val_fraction > 0.0;
  uint64_t n_val = 0;
  if (tail) {
    // At least one window, so a tiny dataset still has something to evaluate on.
    n_val = std::max<uint64_t>(static_cast<uint64_t>(std::llround(opt_.val_fraction * static_cast<double>(all))), W);
    n_val = std::min(n_val, all);
    split_tail(train_, val_, n_val);
  }

  train_prefix_.assign(1, 0);
  for (const auto& s : train_) train_prefix_.push_back(train_prefix_.back() + (s.size >= W ? s.size - T : 0));
  const uint64_t starts = train_prefix_.back();
  if (starts == 0) {
    if (tail)
      throw Error("dataset " + name + " has " + std::to_string(all) + " tokens; after the validation tail of " +
                      std::to_string(n_val) + " tokens, fewer than " + window + " remain for training",
                  "lower data.val_fraction, use a longer text or a smaller model.context");
    throw Error("no training shard of dataset " + name + " holds " + window,
                "use longer shards or a smaller model.context");
  }

  // Rank slices of the start indices, T starts apart, so windows of neighbouring ranks share no token.
  const uint64_t world = static_cast<uint64_t>(opt_.world_size), r = static_cast<uint64_t>(opt_.rank);
  rank_lo_ = mul_div(starts, r, world);
  rank_hi_ = mul_div(starts, r + 1, world);
  if (r + 1 < world) rank_hi_ = rank_hi_ > rank_lo_ + T ? rank_hi_ - T : rank_lo_;
  if (rank_hi_ <= rank_lo_)
    throw Error("dataset " + name + " is too small to give each of " + std::to_string(world) +
                    " data ranks its own windows of " + std::to_string(W) + " tokens",
                "use a longer dataset, fewer GPUs (dist.gpus) or a smaller model.context");

  if (opt_.val_tokens > 0) cut_val(name);
  val_prefix_.assign(1, 0);
  for (const auto& s : val_) val_prefix_.push_back(val_prefix_.back() + (s.size >= W ? (s.size - 1) / T : 0));
  val_windows_ = val_prefix_.back();
  if (!val_.empty() && val_windows_ == 0)
    throw Error("the validation shards of dataset " + name + " hold no " + window,
                "use longer validation shards or a smaller model.context");
  train_tokens_ = total_of(train_);
  val_tokens_ = total_of(val_);
}

// Keeps the first val_tokens / T windows of the validation data (each T inputs and the next token as the last
// target) and nothing after them, so an evaluation of every window sees exactly those tokens once.
void WindowSampler::cut_val(const std::string& name) {
  const uint64_t T = static_cast<uint64_t>(opt_.context);
  uint64_t want = opt_.val_tokens / T, have = 0;
  std::vector<Segment> kept;
  for (const Segment& s : val_) {
    if (want == 0) break;
    const uint64_t windows = s.size > T ? std::min((s.size - 1) / T, want) : 0;
    if (windows) kept.push_back({s.data, windows * T + 1}), want -= windows, have += windows;
  }
  if (want > 0)
    throw Error("the validation data of dataset " + name + " holds " + std::to_string(have * T) +
                    " tokens in windows of " + std::to_string(T) + ", fewer than eval.val_tokens (" +
                    std::to_string(opt_.val_tokens) + ")",
                "lower eval.val_tokens, or give longer validation data (data.val_path)");
  val_ = std::move(kept);
}

const uint16_t* WindowSampler::train_start(uint64_t index) const {
  // The segment whose starts contain index; segments too short for a window own no starts and are skipped.
  size_t s =
      static_cast<size_t>(std::upper_bound(train_prefix_.begin(), train_prefix_.end(), index) - train_prefix_.begin()) -
      1;
  return train_[s].data + (index - train_prefix_[s]);
}

std::vector<const uint16_t*> WindowSampler::train(uint64_t seed) const {
  std::vector<const uint16_t*> out(static_cast<size_t>(opt_.batch_size));
  uint64_t state = seed, width = rank_hi_ - rank_lo_;
  for (auto& p : out) {
    // Lemire's multiply-shift maps 64 random bits onto [0, width) without a modulo.
    uint64_t u = splitmix_next(state);
    p = train_start(rank_lo_ + static_cast<uint64_t>((static_cast<unsigned __int128>(u) * width) >> 64));
  }
  return out;
}

std::vector<const uint16_t*> WindowSampler::val(int64_t i) const {
  if (!val_windows_) return {};
  const uint64_t T = static_cast<uint64_t>(opt_.context), B = static_cast<uint64_t>(opt_.batch_size);
  std::vector<const uint16_t*> out(B);
  uint64_t first =
      (static_cast<uint64_t>(i) * static_cast<uint64_t>(opt_.world_size) + static_cast<uint64_t>(opt_.rank)) * B;
  for (uint64_t b = 0; b < B; ++b) {
    uint64_t k = (first + b) % val_windows_;
    size_t s =
        static_cast<size_t>(std::upper_bound(val_prefix_.begin(), val_prefix_.end(), k) - val_prefix_.begin()) - 1;
    out[b] = val_[s].data + (k - val_prefix_[s]) * T;
  }
  return out;
}

}  // namespace tokamak
