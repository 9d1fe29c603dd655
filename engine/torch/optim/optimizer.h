// AdamW as GPT-2 training uses it: weight decay on 2-D weights only, a warm-up + cosine learning rate, a
// global grad-norm clip, and two step implementations over the same state: a per-tensor loop (the write-ups'
// baseline) and ATen's fused multi-tensor kernel (`speed.fused_adamw`), whose step counters live on the device.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "engine/torch/optim/optimizer_state.h"

namespace tokamak {

struct Config;

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  bool fused = false;
  // optimizer.head_lr / optimizer.embed_lr as multiples of optimizer.lr (1 = the same): the untied head's ("lm_head")
  // and the embeddings' ("wte.weight", "wpe.weight") learning rates.
  double head_lr_scale = 1, embed_lr_scale = 1;
};

// The multiple of the schedule's lr at which AdamW updates the parameter `name`.
double adamw_lr_scale(const std::string& name, const AdamWOptions& options);

// The lr fused AdamW is given for a group: the schedule's lr times the group's scale, rounded as the device path
// computes it (a 0-dim float tensor, multiplied in float, read back as a double by the kernel). Eager and
// CUDA-graphed runs then feed the kernel the same bits; a double lr would differ from the graph's in its low bits.
double fused_adamw_lr(double lr, double lr_scale);

// What the training loop steps: AdamW, or Muon with AdamW beside it (engine/torch/optim/muon.h).
class Optimizer : public OptimizerState {
 public:
  // One update; `lr` is the schedule's value for optimizer.lr (a group with its own peak scales it). found_inf (a
  // 1-element float tensor, or undefined): when it holds a non-zero value the update is skipped on the device,
  // with no host sync.
  virtual void step(double lr, const at::Tensor& found_inf = {}) = 0;
  // The same update with the lr read from a 0-dim float tensor on the device, so that a captured CUDA graph
  // (speed.cuda_graphs) takes each step's lr from its buffer instead of the capture's. Fused AdamW only.
  virtual void step_device_lr(const at::Tensor& lr, const at::Tensor& found_inf);
  virtual void zero_grad() = 0;  // set_to_none: the next backward writes fresh gradients instead of adding
};

// One tensor AdamW updates, with its gradient given explicitly (ZeRO-1's shard pieces are views whose
// gradient is a slice of a reduced bucket, not their .grad) and its weight-decay group chosen by the caller.
struct AdamWSlot {
  std::string name;
  at::Tensor param;  // updated in place
  at::Tensor grad;   // undefined: use param.grad()
  bool decay = true;
  double lr_scale = 1;  // this tensor's lr as a multiple of the step's (adamw_lr_scale)
};

class AdamW : public Optimizer {
 public:
  // `params` are (name, tensor) pairs; names are used in checkpoints. 2-D weights are decayed.
  AdamW(const std::vector<std::pair<std::string, at::Tensor>>& params, const AdamWOptions& options);
  AdamW(const std::vector<AdamWSlot>& slots, const AdamWOptions& options);
  // One update with learning rate `lr`. found_inf (a 1-element float tensor, or undefined): when it holds a
  // non-zero value the update is skipped on the device, with no host sync.
  void step(double lr, const at::Tensor& found_inf = {}) override;
  void step_device_lr(const at::Tensor& lr, const at::Tensor& found_inf) override;
  void zero_grad() override;
  int64_t steps_taken() const override { return step_; }
  void set_steps_taken(int64_t steps) override { step_ = steps; }
  // Every parameter's state, by the parameter's name (checkpoints save and restore it in place).
  void for_each_state(const StateVisitor& visit) override;

 private:
  struct Group {
    std::vector<std::string> names;
    std::vector<at::Tensor> params, grads, exp_avg, exp_avg_sq, steps;  // grads[i] undefined: params[i].grad()
    double weight_decay = 0;
    double lr_scale = 1;
  };
  void add(const AdamWSlot& slot);
  void step_loop(Group& g, double lr);
  // lr: a double, or a 0-dim float tensor on the device (the tensor_lr overload of ATen's kernel).
  void step_fused(Group& g, const std::variant<double, at::Tensor>& lr, const at::Tensor& found_inf);
  std::vector<Group> groups_;
  AdamWOptions options_;
  int64_t step_ = 0;
};

// Scales the gradients so their global L2 norm is at most max_norm (max_norm <= 0: no clipping). Returns the
// norm before clipping as a device tensor: reading it is the caller's choice (a host sync).
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);
// The same over gradients given as tensors; `sum_of_squares` (optional) turns this rank's sum of squared
// norms into the global one (ZeRO-1: each rank holds a shard of the gradient, so the norm is all-reduced).
at::Tensor clip_gradients(const std::vector<at::Tensor>& grads, double max_norm,
                          const std::function<void(at::Tensor&)>& sum_of_squares = {});

// Linear warm-up to lr, then (schedule.name) cosine decay to lr * min_lr_ratio at the last step, or (wsd) lr
// held until the last schedule.decay_fraction of the steps, which decay linearly to lr * min_lr_ratio.
double learning_rate(const Config& config, int64_t step);

}  // namespace tokamak
