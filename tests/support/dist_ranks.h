// Data-parallel ranks inside one test process (a thread each) over a real c10d group, with the engine's
// reducer and optimizers, against one process that trains on all the ranks' batches at once. The same code
// runs Gloo CPU ranks in CI (test_dist) and CUDA ranks on a GPU (test_gpu: NCCL of one rank, or two Gloo
// ranks sharing one GPU), so the GPU tests run what CI has already exercised.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/torch/parallel/process_group.h"
#include "engine/torch/train/loader.h"

namespace tokamak::test {

struct RanksOptions {
  int world = 2;
  c10::Device device = c10::kCPU;
  Backend backend = Backend::kAuto;
  bool zero = false;  // ZeRO-1: reduce-scatter, sharded AdamW, all-gather
  int steps = 3;
  int64_t bucket_bytes = 16384;  // several buckets for the tiny models
  std::string checkpoint;        // when set: rank 0 writes a checkpoint here after the last step (all gather)
};

struct RanksResult {
  std::vector<double> losses, grad_norms;     // each step's mean over the ranks, and its global grad norm
  std::map<std::string, at::Tensor> weights;  // rank 0's parameters after the last step, on the CPU
  std::map<std::string, at::Tensor> state;    // one process only: "exp_avg.NAME", "exp_avg_sq.NAME" (CPU)
  std::string error;                          // a rank's exception, "" when all went well
};

// rank r's batch of a step, on the CPU.
using RankBatch = std::function<Batch(int64_t step, int rank)>;

// Several ranks as threads of one process share LibTorch's c10d flight recorder, whose record() (2.11) adds a
// process group to its map before taking its lock: two ranks' first collectives at once corrupt the map (a
// crash seen in CI). A test that runs ranks in-process calls this first thing (initTestCase), before any
// process group exists: it turns the recorder off (TORCH_FR_BUFFER_SIZE=0, read when the recorder is made).
// One rank per process, as every real run has, never races there.
void disable_flight_recorder();

// A TCP port on 127.0.0.1 that was free a moment ago (defined in test_support.cpp; declared here too because
// test_support.h brings Qt, whose keyword macros break LibTorch's headers after it).
int free_port();

// `world` ranks, each starting from the weights of a model built with seed 1; AdamW (lr 1e-3), clip 1.
RanksResult train_ranks(const ModelConfig& model, const RanksOptions& options, const RankBatch& batch);
// One process on `device` with every rank's batch of a step concatenated: what the ranks must equal.
RanksResult train_one(const ModelConfig& model, int world, int steps, const c10::Device& device,
                      const RankBatch& batch);
// Random token batches (B = 4, context 16), fixed by (step, rank).
Batch random_batch(int64_t vocab, int64_t step, int rank);
// The largest |a - b| over tensors of the same names; `where` gets the worst name.
double largest_difference(const std::map<std::string, at::Tensor>& a, const std::map<std::string, at::Tensor>& b,
                          std::string* where);

}  // namespace tokamak::test
