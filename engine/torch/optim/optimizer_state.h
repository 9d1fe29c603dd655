// The part of an optimizer that a checkpoint saves and restores, apart from how it steps: checkpoints live
// below the training loop (engine/torch/checkpoint), so they know this interface, never AdamW or Muon themselves.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>

namespace tokamak {

// What a checkpoint saves and restores of an optimizer: every parameter's full-size state, by the parameter's
// name, and the count of steps taken. AdamW is one; a data-parallel ZeRO-1 run gathers its shards into
// another (engine/torch/parallel/zero.h), so its checkpoints are the same file as an unsharded run's.
class OptimizerState {
 public:
  virtual ~OptimizerState() = default;
  using StateVisitor =
      std::function<void(const std::string& name, at::Tensor& exp_avg, at::Tensor& exp_avg_sq, at::Tensor& steps)>;
  virtual void for_each_state(const StateVisitor& visit) = 0;
  virtual int64_t steps_taken() const = 0;
  virtual void set_steps_taken(int64_t steps) = 0;
  // State beyond AdamW's, under the key it has in a checkpoint after "optimizer." (Muon: "muon_momentum.NAME").
  using ExtraVisitor = std::function<void(const std::string& key, at::Tensor& state)>;
  virtual void for_each_extra_state(const ExtraVisitor&) {}
};

}  // namespace tokamak
