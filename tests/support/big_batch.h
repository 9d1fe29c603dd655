// What a data-parallel run must equal: the same training in one process with every rank's batch of a step
// concatenated into one big batch. Shared by test_dist (ranks started by `tokamak train --gpus N`) and
// test_slurm (ranks started by srun in a Slurm job), so both compare against the same computation.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/torch/model/gpt.h"

namespace tokamak::test {

// Tiny and fp32 on one thread per rank, so a run takes seconds and float rounding is the only difference
// between the ranks and the reference.
std::vector<std::string> dist_tiny_sets(const std::string& data);

// A model's parameters by name, detached copies.
std::map<std::string, at::Tensor> weights(const GPTImpl& m);

struct Reference {
  std::map<std::string, at::Tensor> weights;  // after the last step
  std::vector<double> loss, grad_norm;        // each step's mean loss and its gradient's norm before clipping
};

// At every step the union of the WORLD ranks' windows (rank r of W draws exactly what worker r draws) as one
// batch of W·B, through the engine's own step, clip and optimizer (AdamW, or Muon + AdamW), with the trainer's order of
// seeding and building.
Reference one_big_batch(Config c, int world);

}  // namespace tokamak::test
