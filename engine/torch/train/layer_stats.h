// Per-layer statistics of a training run (metrics.layers_every): for each parameter group (engine/base/run/
// layer_metrics.h: emb, hN.attn, hN.mlp, hN.norm, head) the weight RMS, the gradient RMS and the step's update
// against the weights (‖Δw‖/‖w‖); for each block the RMS of the residual stream it writes and the entropy of head
// 0's attention, from a forward of the step's first sequence without gradients (GPTImpl::probe).
// Norms are _foreach_norm reductions on the device; everything of a report is read with one copy to the host, after
// the report's own synchronize. Under data parallel it is rank 0's view: its weights, and the gradients its
// reducer left (the mean over ranks; under ZeRO-1, as rank 0 holds them).
// The spike watch asks for the step's gradient RMS per group against its running mean (grad_jump), to name the
// group whose gradients jumped most.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "engine/base/run/metrics.h"

namespace tokamak {

class GPTImpl;

class LayerStats {
 public:
  explicit LayerStats(GPTImpl& model);

  // Before a step whose statistics are due: the weights as they are, the update's starting point (one copy of the
  // parameters on their device, freed by add_to).
  void keep_weights();
  // After that step: every statistic into METRICS, the probe's forward on TOKENS (1, T). One host read.
  void add_to(Metrics& metrics, const at::Tensor& tokens);

  // The step's gradient RMS per group divided by its running mean over the steps before, (groups,) fp32 on the
  // device (1 at the first call); the mean then takes this step in. No host read.
  at::Tensor grad_jump();
  // The group of the largest ratio in JUMP (a grad_jump read to the host), and that ratio.
  std::pair<std::string, double> jumped_most(const at::Tensor& jump) const;

  const std::vector<std::string>& groups() const { return groups_; }

 private:
  at::Tensor sum_sq_by_group(const std::vector<at::Tensor>& tensors) const;  // (groups,) fp32: Σ‖t‖² per group
  std::vector<at::Tensor> grads() const;                                     // undefined ones as zeros

  GPTImpl& model_;
  std::vector<at::Tensor> params_;
  std::vector<std::string> groups_;  // in the model's order
  at::Tensor group_of_;              // (params,) int64 on the device: each parameter's group
  at::Tensor numel_;                 // (groups,) fp32 on the device: elements per group
  std::vector<at::Tensor> before_;   // keep_weights' copy
  at::Tensor grad_mean_;             // grad_jump's running mean
};

}  // namespace tokamak
