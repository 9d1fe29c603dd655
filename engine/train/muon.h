// Muon (Keller Jordan et al., 2024: "Muon: An optimizer for hidden layers in neural networks", and the
// modded-nanogpt speedrun) for the blocks' 2-D weights, AdamW for everything else (embeddings, an untied head,
// norms, biases), as opt.optimizer=muon.
//
// Per hidden matrix W (out, in) with gradient G, each step:
//   M ← β·M + (1 − β)·G                  momentum (train.muon_momentum, β = 0.95)
//   U ← (1 − β)·G + β·M                  Nesterov
//   O ← NewtonSchulz5(U)                 ≈ the orthogonal factor U·V^T of U's SVD (newton_schulz5 below)
//   W ← W − lr_muon · sqrt(max(1, out/in)) · O
// with lr_muon = train.muon_lr scaled by the same schedule as train.lr. No weight decay on Muon's matrices
// (the published default). The Newton–Schulz iteration runs in fp32 here (the published code uses bf16 on
// GPUs: a CPU without hardware bf16 emulates it ~100× slower), so updates are at least as accurate.
//
// Muon's only state is M: checkpoints hold it as "optimizer.muon_momentum.NAME" beside AdamW's state for the
// other parameters, so a run resumes bit-exact. It works with gradient accumulation, clipping and data
// parallel (every rank steps the same all-reduced gradients); ZeRO-1 is refused by config_problems.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/train/optimizer.h"

namespace tokamak {

// The published quintic's coefficients and step count.
constexpr double kNewtonSchulzA = 3.4445, kNewtonSchulzB = -4.7750, kNewtonSchulzC = 2.0315;
constexpr int kNewtonSchulzSteps = 5;

// X = G / (‖G‖_F + 1e-7) (transposed so that rows ≤ columns), then `steps` times X ← a·X + (b·A + c·A²)·X with
// A = X·X^T; transposed back. Returns fp32: singular values end near 1 (the quintic is tuned for speed, not
// convergence: they land in about [0.7, 1.2]).
at::Tensor newton_schulz5(const at::Tensor& g, int steps = kNewtonSchulzSteps);

// Whether a parameter is one of Muon's: a 2-D weight inside a transformer block.
bool is_muon_parameter(const std::string& name, const at::Tensor& p);

struct MuonOptions {
  double momentum = 0.95;
  double lr_scale = 10;  // train.muon_lr / train.lr: Muon's lr relative to the schedule's value
  int ns_steps = kNewtonSchulzSteps;
};

class Muon : public Optimizer {
 public:
  Muon(const std::vector<std::pair<std::string, at::Tensor>>& params, const AdamWOptions& adamw,
       const MuonOptions& muon);
  void step(double lr, const at::Tensor& found_inf = {}) override;
  void zero_grad() override;
  // AdamW's part (the parameters Muon does not take), by name; steps are counted once for both.
  void for_each_state(const StateVisitor& visit) override { adamw_->for_each_state(visit); }
  void for_each_extra_state(const ExtraVisitor& visit) override;
  int64_t steps_taken() const override { return adamw_->steps_taken(); }
  void set_steps_taken(int64_t steps) override { adamw_->set_steps_taken(steps); }

 private:
  std::unique_ptr<AdamW> adamw_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_, momentum_;  // Muon's matrices and their momentum buffers
  MuonOptions options_;
};

}  // namespace tokamak
