// The training data loader: memory-mapped shards, (B, T+1) windows drawn at random offsets, a validation
// split, and the next batch prepared on a background thread while the current step runs. Which windows a
// batch holds depends only on (seed, step, micro_step), so a resumed run sees exactly the batches an
// uninterrupted one would have seen, and data ranks can take disjoint parts.
#pragma once
#include <torch/types.h>

#include <cstdint>
#include <memory>

#include "engine/base/data/dataset.h"

namespace tokamak {

struct LoaderOptions {
  int64_t batch_size = 8;      // B: sequences per micro-batch
  int64_t context = 128;       // T
  double val_fraction = 0.05;  // tail of the tokens kept for validation when there are no val shards
  uint64_t val_tokens = 0;     // > 0: validation is exactly the first N val tokens (eval.val_tokens)
  uint64_t seed = 1337;
  torch::Device device = torch::kCPU;
  bool pin_memory = false;  // CUDA only: page-locked host buffers and non-blocking copies
  bool prefetch = true;     // prepare the next batch on a background thread
  int rank = 0;             // data parallel: this rank draws only its own share of windows
  int world_size = 1;
};

struct Batch {
  torch::Tensor inputs;   // (B, T) int64 token ids on the device
  torch::Tensor targets;  // (B, T) int64: inputs shifted left by one
};

class Loader {
 public:
  Loader(const PreparedDataset& data, const LoaderOptions& options);
  ~Loader();
  // The train batch for optimizer step `step` (0-based) and micro-step `micro` of `micro_steps`.
  Batch train_batch(int64_t step, int64_t micro, int64_t micro_steps);
  // The i-th validation batch (deterministic; the same i gives the same windows on every call).
  Batch val_batch(int64_t i);
  uint64_t train_tokens() const;
  uint64_t val_tokens() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
