// Where the loader's windows come from, without LibTorch: the train/val split over memory-mapped shards,
// uniform train windows from a seeded stream with rank stratification, and consecutive val windows.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace tokamak {

// A run of tokens no window may cross: one shard, or the part of one on one side of the train/val border.
struct Segment {
  const uint16_t* data = nullptr;
  uint64_t size = 0;
};

// A seed for one stream, from the run's seed and the numbers that name the stream (step, micro, rank, ...).
uint64_t splitmix_seed(uint64_t seed, std::initializer_list<uint64_t> parts);
// splitmix64: advances state and returns the next value.
uint64_t splitmix_next(uint64_t& state);

struct SamplerOptions {
  int64_t batch_size = 8;  // B
  int64_t context = 128;   // T; windows hold T+1 tokens
  double val_fraction = 0.05;
  uint64_t val_tokens = 0;  // > 0: the validation windows cover exactly the first N val tokens (a multiple of T)
  int rank = 0;
  int world_size = 1;
};

class WindowSampler {
 public:
  WindowSampler() = default;
  // Splits off the validation tail when val is empty (the last val_fraction of the train tokens, at least
  // one window), and throws an Error naming `name` when a window of T+1 does not fit.
  WindowSampler(const std::string& name, std::vector<Segment> train, std::vector<Segment> val,
                const SamplerOptions& options);

  // B window starts (each T+1 tokens long) for the stream `seed`; only this rank's slice is drawn from.
  std::vector<const uint16_t*> train(uint64_t seed) const;
  // B consecutive val windows for eval batch i; ranks take interleaved blocks. Empty with no val split.
  std::vector<const uint16_t*> val(int64_t i) const;

  uint64_t train_tokens() const { return train_tokens_; }
  uint64_t val_tokens() const { return val_tokens_; }
  bool has_val() const { return val_windows_ > 0; }

 private:
  const uint16_t* train_start(uint64_t index) const;
  void cut_val(const std::string& name);
  SamplerOptions opt_;
  std::vector<Segment> train_, val_;
  std::vector<uint64_t> train_prefix_;  // starts before segment s: windows in train_[0..s)
  std::vector<uint64_t> val_prefix_;    // val windows (stride T) before segment s
  uint64_t rank_lo_ = 0, rank_hi_ = 0;  // this rank's slice of train start indices
  uint64_t val_windows_ = 0;
  uint64_t train_tokens_ = 0, val_tokens_ = 0;
};

}  // namespace tokamak
