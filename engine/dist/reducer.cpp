// Bucketed gradient all-reduce overlapped with backward (see reducer.h).
//
// On CUDA the collectives run on ProcessGroupNCCL's own stream: it records an event on the stream that
// produced the bucket (autograd's device stream, current while the hook runs) and makes its NCCL stream
// wait for it, and Work::wait() makes the caller's stream wait for the collective's end event without
// blocking the host. So communication overlaps the rest of backward on a separate stream ordered by events,
// as llm.c's zero.cuh does by hand. On CPU, Gloo runs each collective on its own threads while the autograd
// thread goes on.
#include "engine/dist/reducer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <unordered_set>

#include "engine/util/error.h"

namespace tokamak {
namespace {

// Runs after AccumulateGrad has added this backward's gradient into param.grad (our bucket view).
struct ReadyHook : torch::autograd::PostAccumulateGradHook {
  ReadyHook(GradReducer* reducer, size_t index) : reducer(reducer), index(index) {}
  void operator()(const torch::autograd::Variable&) override { reducer->on_grad_ready(index); }
  GradReducer* reducer;
  size_t index;
};

}  // namespace

GradReducer::GradReducer(std::vector<at::Tensor> params, ProcessGroup& group, int64_t bucket_bytes) : group_(group) {
  // A tensor listed twice (tied weights in a model that lists both) would get two views: keep the first.
  std::unordered_set<const void*> seen;
  for (auto& p : params)
    if (p.requires_grad() && seen.insert(p.unsafeGetTensorImpl()).second) params_.push_back(p);
  bucket_of_.assign(params_.size(), 0);
  views_.resize(params_.size());

  // Reverse order: the last layers' gradients are ready first. A bucket holds one dtype on one device.
  std::vector<int64_t> offsets(params_.size(), 0);
  for (size_t k = params_.size(); k-- > 0;) {
    const at::Tensor& p = params_[k];
    const int64_t bytes = p.numel() * static_cast<int64_t>(p.element_size());
    bool fits = !buckets_.empty();
    if (fits) {
      Bucket& b = buckets_.back();
      const at::Tensor& first = params_[b.params.front()];
      int64_t used = 0;
      for (size_t i : b.params) used += params_[i].numel() * static_cast<int64_t>(params_[i].element_size());
      fits = first.scalar_type() == p.scalar_type() && first.device() == p.device() && used + bytes <= bucket_bytes;
    }
    if (!fits) buckets_.emplace_back();
    buckets_.back().params.push_back(k);
    bucket_of_[k] = buckets_.size() - 1;
  }
  for (Bucket& b : buckets_) {
    int64_t numel = 0;
    for (size_t i : b.params) offsets[i] = numel, numel += params_[i].numel();
    b.flat = at::zeros({numel}, params_[b.params.front()].options().requires_grad(false));
    for (size_t i : b.params) views_[i] = b.flat.narrow(0, offsets[i], params_[i].numel()).view(params_[i].sizes());
  }
  for (size_t i = 0; i < params_.size(); ++i)
    torch::autograd::impl::set_post_acc_grad_hooks(params_[i], std::make_unique<ReadyHook>(this, i));
  zero_grad();
}

GradReducer::~GradReducer() {
  for (auto& p : params_) torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

std::vector<std::vector<size_t>> GradReducer::bucket_layout() const {
  std::vector<std::vector<size_t>> out;
  for (const Bucket& b : buckets_) out.push_back(b.params);
  return out;
}

void GradReducer::zero_grad() {
  for (Bucket& b : buckets_) b.flat.zero_();
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& g = params_[i].grad();
    if (!g.defined() || !g.is_same(views_[i])) params_[i].mutable_grad() = views_[i];
  }
}

void GradReducer::prepare(bool last) {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_ = last;
  if (!last) return;
  for (Bucket& b : buckets_) b.pending = b.params.size();
  next_launch_ = 0, started_in_backward_ = 0;
}

void GradReducer::on_grad_ready(size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Someone replaced .grad (an optimizer's set-to-none zero_grad): take its values and point it back.
  at::Tensor& g = params_[index].mutable_grad();
  if (!g.is_same(views_[index])) {
    views_[index].copy_(g);
    g = views_[index];
  }
  if (!sync_) return;
  Bucket& b = buckets_[bucket_of_[index]];
  if (b.pending > 0 && --b.pending == 0) {
    const size_t before = next_launch_;
    launch_ready();
    started_in_backward_ += next_launch_ - before;
  }
}

void GradReducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    b.work = group_.all_reduce_sum(b.flat);
  }
}

void GradReducer::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Parameters that took no part in this backward still have to be reduced (as zeros), in order.
    for (Bucket& b : buckets_) b.pending = 0;
    launch_ready();
    sync_ = false;
  }
  const double inv_world = 1.0 / static_cast<double>(group_.size());
  for (Bucket& b : buckets_) {
    b.work.wait();
    b.flat.mul_(inv_world);
  }
}

}  // namespace tokamak
