// ZeRO-1: AdamW on this rank's shard, the global-norm clip, and gathering / scattering the full-size state
// for checkpoints (see zero.h).
#include "engine/torch/parallel/zero.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <array>
#include <map>
#include <unordered_map>

#include "engine/base/util/error.h"
#include "engine/torch/parallel/process_group.h"
#include "engine/torch/parallel/reducer.h"

namespace tokamak {
namespace {

// Named full-size tensors on the CPU: a checkpoint's optimizer part.
class FullState : public OptimizerState {
 public:
  struct Entry {
    std::string name;
    at::Tensor exp_avg, exp_avg_sq, steps;
  };
  std::vector<Entry> entries;
  int64_t steps = 0;

  void for_each_state(const StateVisitor& visit) override {
    for (Entry& e : entries) visit(e.name, e.exp_avg, e.exp_avg_sq, e.steps);
  }
  int64_t steps_taken() const override { return steps; }
  void set_steps_taken(int64_t s) override { steps = s; }
};

FullState::Entry zero_entry(const std::string& name, const at::Tensor& p) {
  const auto cpu = p.options().device(at::kCPU).requires_grad(false);
  return {name, at::zeros(p.sizes(), cpu), at::zeros(p.sizes(), cpu), at::zeros({}, cpu.dtype(at::kFloat))};
}

}  // namespace

std::unique_ptr<OptimizerState> full_adamw_state(const std::vector<std::pair<std::string, at::Tensor>>& named) {
  auto full = std::make_unique<FullState>();
  for (const auto& [name, p] : named)
    if (p.requires_grad()) full->entries.push_back(zero_entry(name, p));
  return full;
}

ShardedAdamW::ShardedAdamW(const std::vector<std::pair<std::string, at::Tensor>>& named, GradReducer& reducer,
                           ProcessGroup& group, const AdamWOptions& options)
    : reducer_(reducer), group_(group) {
  if (reducer.mode() != ReduceMode::kReduceScatter)
    throw Error("ZeRO-1 needs a reduce-scattering gradient reducer", "this is a bug in the trainer's set-up");
  std::unordered_map<const void*, std::string> name_of;
  for (const auto& [name, p] : named) name_of.emplace(p.unsafeGetTensorImpl(), name);  // tied: the first name
  const std::vector<at::Tensor>& params = reducer.params();
  names_.resize(params.size());
  std::vector<AdamWSlot> slots;
  at::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = name_of.find(params[i].unsafeGetTensorImpl());
    if (it == name_of.end()) throw Error("ZeRO-1: a parameter of the reducer has no name", "this is a bug");
    names_[i] = it->second;
    if (!params[i].is_contiguous())
      throw Error("ZeRO-1 needs contiguous parameters; " + names_[i] + " is not", "set dist.zero=0");
    // The overlap of the parameter's elements [o, o + n) in its bucket with this rank's slice [lo, hi).
    const size_t b = reducer.bucket_of(i);
    const int64_t slice = reducer.bucket_flat(b).numel() / group.size(), lo = group.rank() * slice, hi = lo + slice;
    const int64_t o = reducer.offset_in_bucket(i), n = params[i].numel();
    const int64_t from = std::max(o, lo), to = std::min(o + n, hi);
    if (from >= to) continue;
    Piece piece{i, b, from - o, from - lo, to - from};
    pieces_.push_back(piece);
    // detach(): a view that shares the parameter's storage, updated in place without autograd.
    at::Tensor param_view = params[i].detach().view({-1}).narrow(0, piece.in_param, piece.numel);
    at::Tensor grad_view = reducer.shard(b).narrow(0, piece.in_shard, piece.numel);
    slots.push_back(
        {names_[i], param_view, grad_view, /*decay=*/params[i].dim() >= 2, adamw_lr_scale(names_[i], options)});
  }
  adamw_ = std::make_unique<AdamW>(slots, options);
}

ShardedAdamW::~ShardedAdamW() = default;

at::Tensor ShardedAdamW::clip_grad_norm(double max_norm) {
  // The slices (padding included: zeros) partition every gradient element once across the ranks.
  std::vector<at::Tensor> slices;
  for (size_t b = 0; b < reducer_.bucket_count(); ++b) slices.push_back(reducer_.shard(b));
  return clip_gradients(slices, max_norm, [this](at::Tensor& sum_sq) { group_.all_reduce_sum(sum_sq).wait(); });
}

at::Tensor ShardedAdamW::unscale(const at::Tensor& inv_scale) {
  std::vector<at::Tensor> slices;
  for (size_t b = 0; b < reducer_.bucket_count(); ++b) slices.push_back(reducer_.shard(b));
  at::Tensor found_inf = at::zeros({1}, inv_scale.options());
  if (!slices.empty()) at::_amp_foreach_non_finite_check_and_unscale_(slices, found_inf, inv_scale);
  group_.all_reduce_max(found_inf).wait();
  return found_inf;
}

void ShardedAdamW::step(double lr, const at::Tensor& found_inf) {
  adamw_->step(lr, found_inf);
  at::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = reducer_.params();
  // This rank's updated pieces into its slice of each bucket (over the reduced gradient, no longer needed),
  // then every bucket's all-gather in flight at once, then the weights out of the gathered buckets.
  for (const Piece& p : pieces_)
    reducer_.shard(p.bucket)
        .narrow(0, p.in_shard, p.numel)
        .copy_(params[p.param].detach().view({-1}).narrow(0, p.in_param, p.numel));
  std::vector<PendingWork> gathers;
  for (size_t b = 0; b < reducer_.bucket_count(); ++b) {
    at::Tensor flat = reducer_.bucket_flat(b), mine = reducer_.shard(b);
    gathers.push_back(group_.all_gather(flat, mine));
  }
  for (auto& g : gathers) g.wait();
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& flat = reducer_.bucket_flat(reducer_.bucket_of(i));
    params[i].detach().view({-1}).copy_(flat.narrow(0, reducer_.offset_in_bucket(i), params[i].numel()));
  }
}

std::unique_ptr<OptimizerState> ShardedAdamW::gather_state() {
  at::NoGradGuard no_grad;
  const std::vector<at::Tensor>& params = reducer_.params();
  // This rank's state tensors of each piece, by the piece's parameter.
  std::map<std::string, std::array<at::Tensor, 3>> mine;
  adamw_->for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
    mine[name] = {m, v, s};
  });
  const bool keep = group_.rank() == 0;
  auto full = std::make_unique<FullState>();
  if (keep) {
    for (size_t i = 0; i < params.size(); ++i) full->entries.push_back(zero_entry(names_[i], params[i]));
    full->steps = adamw_->steps_taken();
  }
  // Step counters: each rank fills those of the parameters it has a piece of; pieces of one parameter on
  // different ranks have stepped together, so the maximum over ranks is every parameter's count.
  const auto device = reducer_.bucket_flat(0).device();
  at::Tensor counts = at::zeros({static_cast<int64_t>(params.size())}, at::TensorOptions().device(device));
  for (const Piece& p : pieces_) counts[static_cast<int64_t>(p.param)].copy_(mine.at(names_[p.param])[2]);
  group_.all_reduce_max(counts).wait();
  const at::Tensor counts_cpu = counts.cpu();
  // exp_avg (k = 0) and exp_avg_sq (k = 1), one bucket at a time: each rank's slice of the bucket holds
  // its pieces' state, an all-gather makes the bucket's whole state, rank 0 copies it out per parameter.
  for (int k = 0; k < 2; ++k)
    for (size_t b = 0; b < reducer_.bucket_count(); ++b) {
      const at::Tensor& flat = reducer_.bucket_flat(b);
      at::Tensor whole = at::zeros_like(flat), slice = at::zeros({flat.numel() / group_.size()}, flat.options());
      for (const Piece& p : pieces_)
        if (p.bucket == b) slice.narrow(0, p.in_shard, p.numel).copy_(mine.at(names_[p.param])[k]);
      group_.all_gather(whole, slice).wait();
      if (!keep) continue;
      for (size_t i = 0; i < params.size(); ++i)
        if (reducer_.bucket_of(i) == b) {
          at::Tensor& out = k == 0 ? full->entries[i].exp_avg : full->entries[i].exp_avg_sq;
          out.view({-1}).copy_(whole.narrow(0, reducer_.offset_in_bucket(i), params[i].numel()));
        }
    }
  if (!keep) return nullptr;
  for (size_t i = 0; i < params.size(); ++i) full->entries[i].steps.fill_(counts_cpu[static_cast<int64_t>(i)]);
  return full;
}

void ShardedAdamW::load_state(OptimizerState& full) {
  at::NoGradGuard no_grad;
  std::map<std::string, std::array<at::Tensor, 3>> loaded;
  full.for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
    loaded[name] = {m, v, s};
  });
  std::map<std::string, const Piece*> piece_of;
  for (const Piece& p : pieces_) piece_of[names_[p.param]] = &p;
  adamw_->for_each_state([&](const std::string& name, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
    auto it = loaded.find(name);
    if (it == loaded.end()) throw Error("the optimizer state to load has no " + name, "this is a bug");
    const Piece& p = *piece_of.at(name);
    m.copy_(it->second[0].reshape({-1}).narrow(0, p.in_param, p.numel));
    v.copy_(it->second[1].reshape({-1}).narrow(0, p.in_param, p.numel));
    s.copy_(it->second[2]);
  });
  adamw_->set_steps_taken(full.steps_taken());
}

int64_t ShardedAdamW::steps_taken() const { return adamw_->steps_taken(); }

int64_t ShardedAdamW::state_bytes() const {
  int64_t bytes = 0;
  adamw_->for_each_state([&](const std::string&, at::Tensor& m, at::Tensor& v, at::Tensor& s) {
    bytes += static_cast<int64_t>(m.nbytes() + v.nbytes() + s.nbytes());
  });
  return bytes;
}

int64_t ShardedAdamW::unsharded_state_bytes() const {
  int64_t bytes = 0;
  for (const at::Tensor& p : reducer_.params()) bytes += 2 * static_cast<int64_t>(p.nbytes()) + 4;
  return bytes;
}

}  // namespace tokamak
