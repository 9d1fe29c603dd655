// Bucketed gradient all-reduce overlapped with backward (see reducer.h).
//
// On CUDA the collectives run on ProcessGroupNCCL's own stream: it records an event on the stream that
// produced the bucket (autograd's device stream, current while the hook runs) and makes its NCCL stream
// wait for it, and Work::wait() makes the caller's stream wait for the collective's end event without
// blocking the host. So communication overlaps the rest of backward on a separate stream ordered by events,
// as llm.c's zero.cuh does by hand. On CPU, Gloo runs each collective on its own threads while the autograd
// thread goes on.
#include "engine/torch/parallel/reducer.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <unordered_set>

#include "engine/base/util/error.h"

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

GradReducer::GradReducer(std::vector<at::Tensor> params, ProcessGroup& group, int64_t bucket_bytes, ReduceMode mode)
    : group_(group), mode_(mode) {
  // A tensor listed twice (tied weights in a model that lists both) would get two views: keep the first.
  std::unordered_set<const void*> seen;
  for (auto& p : params)
    if (p.requires_grad() && seen.insert(p.unsafeGetTensorImpl()).second) params_.push_back(p);
  bucket_of_.assign(params_.size(), 0);
  views_.resize(params_.size());

  // Reverse order: the last layers' gradients are ready first. A bucket holds one dtype on one device.
  offset_.assign(params_.size(), 0);
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
  const int64_t world = group_.size();
  for (Bucket& b : buckets_) {
    int64_t numel = 0;
    for (size_t i : b.params) offset_[i] = numel, numel += params_[i].numel();
    // Reduce-scatter splits a bucket into world equal slices: the padding (zeros, never a parameter's) makes
    // any parameter count work with any world size.
    if (mode_ == ReduceMode::kReduceScatter) numel = (numel + world - 1) / world * world;
    b.flat = at::zeros({numel}, params_[b.params.front()].options().requires_grad(false));
    for (size_t i : b.params) views_[i] = b.flat.narrow(0, offset_[i], params_[i].numel()).view(params_[i].sizes());
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

at::Tensor GradReducer::shard(size_t b) const {
  const int64_t n = buckets_[b].flat.numel() / group_.size();
  return buckets_[b].flat.narrow(0, group_.rank() * n, n);
}

void GradReducer::prepare(bool last, bool timed) {
  std::lock_guard<std::mutex> lock(mutex_);
  sync_ = last;
  if (!last) return;
  for (Bucket& b : buckets_) b.pending = b.params.size(), b.timing.reset();
  next_launch_ = 0, started_in_backward_ = 0;
  // Host clocks time CPU collectives only: on CUDA a collective is enqueued on a stream and neither its
  // launch nor wait() nor the future's callback tells when the GPU ran it (the step profile's CUDA events do).
  timed_ = timed && !buckets_.empty() && !buckets_.front().flat.is_cuda();
  epoch_ = std::chrono::steady_clock::now();
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

double GradReducer::since_epoch_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch_).count();
}

void GradReducer::launch_ready() {
  while (next_launch_ < buckets_.size() && buckets_[next_launch_].pending == 0) {
    Bucket& b = buckets_[next_launch_++];
    if (timed_) {
      b.timing = std::make_shared<Bucket::Timing>();
      b.timing->bytes = b.flat.numel() * static_cast<int64_t>(b.flat.element_size());
      b.timing->start_ms = since_epoch_ms();
    }
    if (mode_ == ReduceMode::kReduceScatter) {
      // In place: the input is the whole bucket, the output this rank's slice of it (NCCL supports exactly
      // this aliasing; Gloo copies the input first, see docs/multi-gpu.md).
      at::Tensor mine = shard(next_launch_ - 1);
      b.work = group_.reduce_scatter_sum(mine, b.flat);
    } else {
      b.work = group_.all_reduce_sum(b.flat);
    }
    if (b.timing) {
      std::shared_ptr<Bucket::Timing> t = b.timing;
      auto epoch = epoch_;
      t->exact = b.work.on_done([t, epoch] {
        double unset = -1;
        t->end_ms.compare_exchange_strong(
            unset, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch).count());
      });
    }
  }
}

void GradReducer::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    backward_end_ms_ = timed_ ? since_epoch_ms() : 0;
    // Parameters that took no part in this backward still have to be reduced (as zeros), in order.
    for (Bucket& b : buckets_) b.pending = 0;
    launch_ready();
    sync_ = false;
  }
  const double inv_world = 1.0 / static_cast<double>(group_.size());
  for (size_t k = 0; k < buckets_.size(); ++k) {
    Bucket& b = buckets_[k];
    b.work.wait();
    if (b.timing) {  // the callback may not have run yet: then now is the end (an upper bound)
      double unset = -1;
      if (b.timing->end_ms.compare_exchange_strong(unset, since_epoch_ms())) b.timing->exact = false;
    }
    if (mode_ == ReduceMode::kReduceScatter) shard(k).mul_(inv_world);  // the rest of the bucket is stale
    else b.flat.mul_(inv_world);
  }
}

Overlap overlap_of(const std::vector<BucketTiming>& timings) {
  Overlap o;
  if (timings.empty()) return o;
  o.measured = true;
  o.first_start_ms = timings.front().start_ms, o.last_end_ms = timings.front().end_ms;
  double total = 0, before = 0;
  for (const BucketTiming& t : timings) {
    o.first_start_ms = std::min(o.first_start_ms, t.start_ms);
    o.last_end_ms = std::max(o.last_end_ms, t.end_ms);
    total += t.end_ms - t.start_ms;
    before += std::max(0.0, std::min(t.end_ms, 0.0) - t.start_ms);
  }
  o.hidden = total > 0 ? before / total : 0;
  return o;
}

std::vector<BucketTiming> GradReducer::timings() const {
  std::vector<BucketTiming> out;
  for (const Bucket& b : buckets_) {
    if (!b.timing) return {};
    out.push_back({b.timing->bytes, b.timing->start_ms - backward_end_ms_, b.timing->end_ms.load() - backward_end_ms_,
                   b.timing->exact});
  }
  return out;
}

}  // namespace tokamak
