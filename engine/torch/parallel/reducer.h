// The gradient reducer of data parallelism, written by hand because LibTorch has no C++ DDP module.
// Parameters are grouped into buckets of ~bucket_bytes in reverse order (the order backward produces their
// gradients); each parameter's .grad is a view into its bucket's flat buffer, so backward accumulates
// straight into the buffer that is all-reduced. A post-accumulate-grad hook counts the parameters of a bucket
// that are done; when a bucket is complete (and every bucket before it has started, so all ranks start the
// same collectives in the same order) its all-reduce starts while backward goes on with earlier layers.
// With gradient accumulation only the last micro-step's backward starts collectives.
// ZeRO-1 (dist.zero=1, engine/torch/parallel/zero.h) reduce-scatters each bucket instead: every bucket is padded to a
// multiple of the world size and rank r ends with the mean gradient of its slice r of each bucket only.
#pragma once
#include <ATen/core/Tensor.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/torch/parallel/process_group.h"

namespace tokamak {

enum class ReduceMode {
  kAllReduce,      // every rank gets the whole mean gradient (plain data parallelism)
  kReduceScatter,  // ZeRO-1: every rank gets the mean gradient of its shard of each bucket
};

// When one bucket's collective ran, in ms relative to the end of backward (negative: before it ended).
struct BucketTiming {
  int64_t bytes = 0;
  double start_ms = 0, end_ms = 0;
  bool end_exact = true;  // false: the backend gives no completion callback; end is when finish() saw it done
};

// Of a step's bucket timings: the fraction of the collectives' summed durations that lay before the end of
// backward (1: all hidden behind it), when the first started and the last ended (ms, relative to that end).
struct Overlap {
  bool measured = false;
  double hidden = 0, first_start_ms = 0, last_end_ms = 0;
};
Overlap overlap_of(const std::vector<BucketTiming>& timings);

class GradReducer {
 public:
  // `params` in model order; the reducer keeps them and owns their .grad from now on.
  GradReducer(std::vector<at::Tensor> params, ProcessGroup& group, int64_t bucket_bytes = 25ll << 20,
              ReduceMode mode = ReduceMode::kAllReduce);
  ~GradReducer();  // removes the hooks
  GradReducer(const GradReducer&) = delete;
  GradReducer& operator=(const GradReducer&) = delete;

  // Instead of the optimizer's zero_grad: zeroes the buckets and points every .grad back at its view.
  void zero_grad();
  // Before each micro-step's backward: `last` = this backward completes the step's gradients; `timed` =
  // record each bucket's start and end (report steps only: a clock read per bucket and a callback; CPU
  // buckets only, see prepare()).
  void prepare(bool last, bool timed = false);
  // After the last backward: starts the buckets no hook started (parameters that got no gradient), waits
  // for all of them and divides by the world size, so every rank holds the mean gradient (of its shards,
  // with kReduceScatter).
  void finish();
  // The timings of the last timed step's buckets, in launch order (empty when it was not timed).
  std::vector<BucketTiming> timings() const;

  size_t bucket_count() const { return buckets_.size(); }
  // Parameter indices (into `params`) of each bucket, for tests and the start-up table.
  std::vector<std::vector<size_t>> bucket_layout() const;

  // Buckets whose all-reduce the hooks started during the last backward (the rest started in finish()):
  // all of them when every parameter got a gradient, which is what overlaps communication with backward.
  size_t started_in_backward() const { return started_in_backward_; }

  // Called by the hooks (on the autograd thread) when parameter `index`'s gradient is complete.
  void on_grad_ready(size_t index);

  // The layout ZeRO-1 shards: the deduplicated parameters, each bucket's flat buffer (padded to a multiple
  // of the world size in kReduceScatter mode) and where each parameter's gradient starts in its bucket.
  ReduceMode mode() const { return mode_; }
  const std::vector<at::Tensor>& params() const { return params_; }
  const at::Tensor& bucket_flat(size_t b) const { return buckets_[b].flat; }
  size_t bucket_of(size_t index) const { return bucket_of_[index]; }
  int64_t offset_in_bucket(size_t index) const { return offset_[index]; }
  // This rank's slice of bucket b: numel / world elements from rank · numel / world.
  at::Tensor shard(size_t b) const;

 private:
  struct Bucket {
    at::Tensor flat;             // (sum of numel) one dtype, one device
    std::vector<size_t> params;  // indices into params_
    size_t pending = 0;          // parameters whose gradient is not complete yet in this backward
    PendingWork work;
    struct Timing {
      int64_t bytes = 0;
      double start_ms = 0;
      std::atomic<double> end_ms{-1};  // set by the backend's callback (its thread), or by finish()
      bool exact = false;
    };
    std::shared_ptr<Timing> timing;  // timed steps only
  };
  void launch_ready();  // starts buckets in order while the next one is complete
  double since_epoch_ms() const;

  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> views_;  // params_[i]'s gradient: a view of its bucket
  std::vector<size_t> bucket_of_;  // params_[i] -> bucket index
  std::vector<int64_t> offset_;    // params_[i] -> element offset in its bucket
  std::vector<Bucket> buckets_;
  ProcessGroup& group_;
  ReduceMode mode_;
  bool timed_ = false;
  std::chrono::steady_clock::time_point epoch_;  // timed steps: when the last backward began
  double backward_end_ms_ = 0;                   // timed steps: when finish() was called, after epoch_
  std::mutex mutex_;                             // hooks may run on autograd's device threads
  size_t next_launch_ = 0;
  size_t started_in_backward_ = 0;
  bool sync_ = false;
};

}  // namespace tokamak
