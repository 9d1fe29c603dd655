// Muon and its Newton–Schulz iteration (see muon.h).
#include "engine/torch/optim/muon.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>

namespace tokamak {

at::Tensor newton_schulz5(const at::Tensor& g, int steps) {
  at::NoGradGuard no_grad;
  const bool tall = g.size(0) > g.size(1);
  at::Tensor x = g.to(at::kFloat);
  if (tall) x = x.t();
  x = x / (x.norm() + 1e-7);  // every singular value ≤ 1: inside the quintic's basin
  for (int i = 0; i < steps; ++i) {
    const at::Tensor a = at::mm(x, x.t());
    const at::Tensor b = kNewtonSchulzB * a + kNewtonSchulzC * at::mm(a, a);
    x = kNewtonSchulzA * x + at::mm(b, x);
  }
  return tall ? x.t().contiguous() : x;
}

at::Tensor polar_express(const at::Tensor& g) {
  at::NoGradGuard no_grad;
  const bool tall = g.size(0) > g.size(1);
  at::Tensor x = g.to(at::kFloat);
  if (tall) x = x.t();
  x = x / (x.norm() * (1 + 2e-2) + 1e-6);
  for (const auto& [a, b, c] : kPolarExpressCoefficients) {
    const at::Tensor s = at::mm(x, x.t());
    x = a * x + at::mm(b * s + c * at::mm(s, s), x);
  }
  return tall ? x.t().contiguous() : x;
}

at::Tensor orthogonalise(const at::Tensor& g, MuonNs ns, int ns_steps) {
  return ns == MuonNs::kPolarExpress ? polar_express(g) : newton_schulz5(g, ns_steps);
}

at::Tensor normuon_normalise(const at::Tensor& o, at::Tensor& second_moment, double beta2) {
  at::NoGradGuard no_grad;
  const at::Tensor o32 = o.to(at::kFloat);
  second_moment.lerp_(o32.square().mean(1, /*keepdim=*/true), 1.0 - beta2);
  const at::Tensor n = o32 * second_moment.clamp_min(1e-10).rsqrt();
  return n * (o32.norm() / n.norm().clamp_min(1e-10));
}

bool is_muon_parameter(const std::string& name, const at::Tensor& p) {
  return p.dim() == 2 && name.rfind("blocks.", 0) == 0;
}

Muon::Muon(const std::vector<std::pair<std::string, at::Tensor>>& params, const AdamWOptions& adamw,
           const MuonOptions& muon)
    : options_(muon) {
  std::vector<std::pair<std::string, at::Tensor>> rest;
  for (const auto& [name, p] : params) {
    if (!p.requires_grad()) continue;
    if (is_muon_parameter(name, p)) {
      names_.push_back(name);
      params_.push_back(p);
      momentum_.push_back(at::zeros_like(p, at::MemoryFormat::Contiguous));
      if (muon.normuon) second_moment_.push_back(at::zeros({p.size(0), 1}, p.options().dtype(at::kFloat)));
    } else {
      rest.emplace_back(name, p);
    }
  }
  adamw_ = std::make_unique<AdamW>(rest, adamw);
}

void Muon::zero_grad() {
  adamw_->zero_grad();
  for (at::Tensor& p : params_) p.mutable_grad() = at::Tensor();
}

void Muon::step(double lr, const at::Tensor& found_inf) {
  adamw_->step(lr, found_inf);
  const double muon_lr = lr * options_.lr_scale, beta = options_.momentum;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor& p = params_[i];
    const at::Tensor grad = p.grad();
    if (!grad.defined()) continue;
    at::Tensor& m = momentum_[i];
    const double shape_scale =
        std::sqrt(std::max(1.0, static_cast<double>(p.size(0)) / static_cast<double>(p.size(1))));
    if (!found_inf.defined()) {
      m.lerp_(grad, 1.0 - beta);
      at::Tensor o = orthogonalise(grad.lerp(m, beta), options_.ns, options_.ns_steps);
      if (options_.normuon) o = normuon_normalise(o, second_moment_[i], options_.beta2);
      p.sub_(o.to(p.scalar_type()), muon_lr * shape_scale);
      continue;
    }
    // The CUDA path without a host sync: compute, then keep the old values where found_inf says skip (a
    // non-finite gradient makes the update NaN, which a multiply by zero would not remove).
    const at::Tensor keep = found_inf.reshape({}) == 0;
    const at::Tensor m_new = m.lerp(grad, 1.0 - beta);
    at::Tensor o = orthogonalise(grad.lerp(m_new, beta), options_.ns, options_.ns_steps);
    if (options_.normuon) {
      at::Tensor v_new = second_moment_[i].clone();
      o = normuon_normalise(o, v_new, options_.beta2);
      second_moment_[i].copy_(at::where(keep, v_new, second_moment_[i]));
    }
    m.copy_(at::where(keep, m_new, m));
    p.copy_(at::where(keep, p - (muon_lr * shape_scale) * o.to(p.scalar_type()), p));
  }
}

void Muon::for_each_extra_state(const ExtraVisitor& visit) {
  for (size_t i = 0; i < params_.size(); ++i) visit("muon_momentum." + names_[i], momentum_[i]);
  for (size_t i = 0; i < second_moment_.size(); ++i) visit("normuon_second_moment." + names_[i], second_moment_[i]);
}

}  // namespace tokamak
