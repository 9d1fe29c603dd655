// Muon and its Newton–Schulz iteration (see muon.h).
#include "engine/train/muon.h"

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
      const at::Tensor o = newton_schulz5(grad.lerp(m, beta), options_.ns_steps);
      p.sub_(o.to(p.scalar_type()), muon_lr * shape_scale);
      continue;
    }
    // The CUDA path without a host sync: compute, then keep the old values where found_inf says skip (a
    // non-finite gradient makes the update NaN, which a multiply by zero would not remove).
    const at::Tensor keep = found_inf.reshape({}) == 0;
    const at::Tensor m_new = m.lerp(grad, 1.0 - beta);
    const at::Tensor o = newton_schulz5(grad.lerp(m_new, beta), options_.ns_steps);
    m.copy_(at::where(keep, m_new, m));
    p.copy_(at::where(keep, p - (muon_lr * shape_scale) * o.to(p.scalar_type()), p));
  }
}

void Muon::for_each_extra_state(const ExtraVisitor& visit) {
  for (size_t i = 0; i < params_.size(); ++i) visit("muon_momentum." + names_[i], momentum_[i]);
}

}  // namespace tokamak
