// AdamW as GPT-2 training uses it: weight decay on 2-D weights only, a warm-up + cosine learning rate, a
// global grad-norm clip, and two step implementations over the same state: a per-tensor loop (the write-ups'
// baseline) and ATen's fused multi-tensor kernel (`opt.fused_adamw`), whose step counters live on the device.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

struct TrainConfig;

struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
  bool fused = false;
};

class AdamW {
 public:
  // `params` are (name, tensor) pairs; names are used in checkpoints.
  AdamW(const std::vector<std::pair<std::string, at::Tensor>>& params, const AdamWOptions& options);
  // One update with learning rate `lr`. found_inf (a 1-element float tensor, or undefined): when it holds a
  // non-zero value the update is skipped on the device, with no host sync.
  void step(double lr, const at::Tensor& found_inf = {});
  void zero_grad();  // set_to_none: the next backward writes fresh gradients instead of adding
  int64_t steps_taken() const { return step_; }
  void set_steps_taken(int64_t steps) { step_ = steps; }
  // Every parameter's state, by the parameter's name (checkpoints save and restore it in place).
  using StateVisitor =
      std::function<void(const std::string& name, at::Tensor& exp_avg, at::Tensor& exp_avg_sq, at::Tensor& steps)>;
  void for_each_state(const StateVisitor& visit);

 private:
  struct Group {
    std::vector<std::string> names;
    std::vector<at::Tensor> params, exp_avg, exp_avg_sq, steps;
    double weight_decay = 0;
  };
  void step_loop(Group& g, double lr);
  void step_fused(Group& g, double lr, const at::Tensor& found_inf);
  std::vector<Group> groups_;
  AdamWOptions options_;
  int64_t step_ = 0;
};

// Scales the gradients so their global L2 norm is at most max_norm (max_norm <= 0: no clipping). Returns the
// norm before clipping as a device tensor: reading it is the caller's choice (a host sync).
at::Tensor clip_grad_norm(const std::vector<at::Tensor>& params, double max_norm);

// Linear warm-up to lr, then cosine decay to lr * min_lr_ratio at the last step.
double learning_rate(const TrainConfig& train, int64_t step);

}  // namespace tokamak
