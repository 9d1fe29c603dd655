// The gradient reducer of data parallelism, written by hand because LibTorch has no C++ DDP module.
// Parameters are grouped into buckets of ~bucket_bytes in reverse order (the order backward produces their
// gradients); each parameter's .grad is a view into its bucket's flat buffer, so backward accumulates
// straight into the buffer that is all-reduced. A post-accumulate-grad hook counts the parameters of a bucket
// that are done; when a bucket is complete (and every bucket before it has started, so all ranks start the
// same collectives in the same order) its all-reduce starts while backward goes on with earlier layers.
// With gradient accumulation only the last micro-step's backward starts collectives.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/dist/process_group.h"

namespace tokamak {

class GradReducer {
 public:
  // `params` in model order; the reducer keeps them and owns their .grad from now on.
  GradReducer(std::vector<at::Tensor> params, ProcessGroup& group, int64_t bucket_bytes = 25ll << 20);
  ~GradReducer();  // removes the hooks
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // Instead of the optimizer's zero_grad: zeroes the buckets and points every .grad back at its view.
  void zero_grad();
  // Before each micro-step's backward: `last` = this backward completes the step's gradients.
  void prepare(bool last);
  // After the last backward: starts the buckets no hook started (parameters that got no gradient), waits
  // for all of them and divides by the world size, so every rank holds the mean gradient.
  void finish();

  size_t bucket_count() const { return buckets_.size(); }
  // Parameter indices (into `params`) of each bucket, for tests and the start-up table.
  std::vector<std::vector<size_t>> bucket_layout() const;

  // Buckets whose all-reduce the hooks started during the last backward (the rest started in finish()):
  // all of them when every parameter got a gradient, which is what overlaps communication with backward.
  size_t started_in_backward() const { return started_in_backward_; }

  // Called by the hooks (on the autograd thread) when parameter `index`'s gradient is complete.
  void on_grad_ready(size_t index);

 private:
  struct Bucket {
    at::Tensor flat;             // (sum of numel) one dtype, one device
    std::vector<size_t> params;  // indices into params_
    size_t pending = 0;          // parameters whose gradient is not complete yet in this backward
    PendingWork work;
  };
  void launch_ready();  // starts buckets in order while the next one is complete

  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> views_;  // params_[i]'s gradient: a view of its bucket
  std::vector<size_t> bucket_of_;  // params_[i] -> bucket index
  std::vector<Bucket> buckets_;
  ProcessGroup& group_;
  std::mutex mutex_;  // hooks may run on autograd's device threads
  size_t next_launch_ = 0;
  size_t started_in_backward_ = 0;
  bool sync_ = false;
};

}  // namespace tokamak
