// Muon (Keller Jordan et al., 2024: "Muon: An optimizer for hidden layers in neural networks", and the
// modded-nanogpt speedrun) for the blocks' 2-D weights, AdamW for everything else (embeddings, an untied head,
// norms, biases), as optimizer.name=muon.
//
// Per hidden matrix W (out, in) with gradient G, each step:
//   M ← β·M + (1 − β)·G                  momentum (optimizer.muon_momentum, β = 0.95)
//   U ← (1 − β)·G + β·M                  Nesterov
//   O ← NewtonSchulz5(U)                 ≈ the orthogonal factor U·V^T of U's SVD (newton_schulz5 below; or
//                                        polar_express, optimizer.muon_ns)
//   W ← W − lr_muon · sqrt(max(1, out/in)) · O
// with lr_muon = optimizer.muon_lr scaled by the same schedule as optimizer.lr. No weight decay on Muon's matrices
// (the published default). The Newton–Schulz iteration runs in fp32 here (the published code uses bf16 on
// GPUs: a CPU without hardware bf16 emulates it ~100× slower), so updates are at least as accurate.
//
// Muon's only state is M: checkpoints hold it as "optimizer.muon_momentum.NAME" beside AdamW's state for the
// other parameters, so a run resumes bit-exact (NorMuon adds "optimizer.normuon_second_moment.NAME"). It works with
// gradient accumulation, clipping and data parallel (every rank steps the same all-reduced gradients); ZeRO-1 is
// refused by config_problems.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/config/choices.h"  // MuonNs
#include "engine/torch/optim/optimizer.h"

namespace tokamak {

// The published quintic's coefficients and step count.
constexpr double kNewtonSchulzA = 3.4445, kNewtonSchulzB = -4.7750, kNewtonSchulzC = 2.0315;
constexpr int kNewtonSchulzSteps = 5;

// X = G / (‖G‖_F + 1e-7) (transposed so that rows ≤ columns), then `steps` times X ← a·X + (b·A + c·A²)·X with
// A = X·X^T; transposed back. Returns fp32: singular values end near 1 (the quintic is tuned for speed, not
// convergence: they land in about [0.7, 1.2]).
at::Tensor newton_schulz5(const at::Tensor& g, int steps = kNewtonSchulzSteps);

// Polar Express (Amsel, Persson, Musco, Gower 2025, "The Polar Express: Optimal Matrix Sign Methods and Their
// Application to the Muon Algorithm", arXiv 2505.16932): one quintic per step, each the minimax-optimal one for
// the interval of singular values the step before leaves. These (a, b, c) are the paper's method computed for 5
// steps with safety factor 2e-2 and cushion 2, as published in modded-nanogpt's record of 2025-09-29.
constexpr double kPolarExpressCoefficients[5][3] = {
    {8.156554524902461, -22.48329292557795, 15.878769915207462},
    {4.042929935166739, -2.808917465908714, 0.5000178451051316},
    {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
    {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
    {2.3465413258596377, -1.7097828382687081, 0.42323551169305323},
};

// X = G / (‖G‖_F · 1.02 + 1e-6) (the safety factor keeps the spectral norm below 1 even after rounding), then
// the five steps X ← a_i·X + (b_i·A + c_i·A²)·X, A = X·X^T, transposed as newton_schulz5. Returns fp32.
at::Tensor polar_express(const at::Tensor& g);

// The orthogonalisation optimizer.muon_ns names (MuonNs, engine/base/config/choices.h).
at::Tensor orthogonalise(const at::Tensor& g, MuonNs ns, int ns_steps = kNewtonSchulzSteps);

// Whether a parameter is one of Muon's: a 2-D weight inside a transformer block.
bool is_muon_parameter(const std::string& name, const at::Tensor& p);

struct MuonOptions {
  double momentum = 0.95;
  double lr_scale = 10;               // optimizer.muon_lr / optimizer.lr: Muon's lr relative to the schedule's value
  int ns_steps = kNewtonSchulzSteps;  // Newton–Schulz only: Polar Express has its five published steps
  MuonNs ns = MuonNs::kNewtonSchulz;  // optimizer.muon_ns
  bool normuon = false;               // optimizer.name=normuon: each neuron's update normalised (below)
  double beta2 = 0.95;                // NorMuon's running mean of the squared update (optimizer.normuon_beta2)
};

// NorMuon (Li et al. 2025, "NorMuon: Making Muon more efficient and scalable", arXiv 2510.05491): Muon's
// orthogonalised update O (out, in) leaves some neurons (rows) with much larger updates than others. With V (out,)
// a running mean of each row's mean square, V ← β2·V + (1 − β2)·mean_j O_ij², the update becomes
// N = O / sqrt(V) rescaled to O's Frobenius norm (as modded-nanogpt's NorMuon record does: Muon's lr carries
// over). Returns N and updates `second_moment` (out, 1) in place.
at::Tensor normuon_normalise(const at::Tensor& o, at::Tensor& second_moment, double beta2);

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
  std::vector<at::Tensor> second_moment_;      // NorMuon: (out, 1) fp32 per matrix; empty for Muon
  MuonOptions options_;
};

}  // namespace tokamak
