// ZeRO-1 (dist.zero=1): AdamW's state sharded over the ranks of a data-parallel group (Rajbhandari et al.,
// "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", 2020, stage 1).
//
// The reducer (in ReduceMode::kReduceScatter) leaves on rank r the mean gradient of slice r of every bucket.
// Each parameter that overlaps a rank's slice gives that rank one "piece": a flat view of the parameter's
// overlapping elements, whose gradient is the matching part of the reduced slice. AdamW (the same class and
// kernels as unsharded training, with the parameter's own weight-decay group) steps only these pieces, so each
// rank holds 1/N of exp_avg and exp_avg_sq. Then every rank writes its updated pieces into its slice of the
// bucket and an all-gather gives every rank the whole updated bucket, copied back into the parameters.
// AdamW is elementwise, so the pieces' updates are exactly the unsharded ones; only the gradient's global
// norm (for clipping) needs a collective: the shards' sums of squares are all-reduced.
//
// Checkpoints stay the ordinary single file: gather_state() assembles the full-size state under the
// parameters' own names (a collective), and load_state() takes a full-size state and keeps this rank's pieces,
// so a checkpoint of any world size, sharded or not, resumes at any other.
#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/torch/optim/optimizer.h"

namespace tokamak {

class GradReducer;
class ProcessGroup;

// A full-size AdamW state on the CPU (zeros), one entry per named parameter: what a checkpoint is loaded into
// before ShardedAdamW::load_state keeps a rank's pieces of it.
std::unique_ptr<OptimizerState> full_adamw_state(const std::vector<std::pair<std::string, at::Tensor>>& named);

class ShardedAdamW {
 public:
  // `named` are the model's (name, parameter) pairs; `reducer` must reduce-scatter (ReduceMode::kReduceScatter)
  // over `group` and outlive this.
  ShardedAdamW(const std::vector<std::pair<std::string, at::Tensor>>& named, GradReducer& reducer, ProcessGroup& group,
               const AdamWOptions& options);
  ~ShardedAdamW();

  // After the reducer's finish(): clips this rank's gradient slices by the global norm, which it returns
  // (a device tensor; every rank gets the same value).
  at::Tensor clip_grad_norm(double max_norm);
  // speed.precision=fp16: this rank's gradient slices multiplied by INV_SCALE in place (LibTorch's
  // _amp_foreach_non_finite_check_and_unscale_); returns found_inf, all-reduced (max) so that every rank skips the
  // same steps although each checked only its own slices.
  at::Tensor unscale(const at::Tensor& inv_scale);
  // AdamW on this rank's pieces (found_inf as in AdamW::step), then all-gathers the updated parameters. The
  // reducer's buckets (the parameters' .grad) hold the gathered weights until the next zero_grad.
  void step(double lr, const at::Tensor& found_inf = {});

  // Collective (every rank calls it, in the same order as other collectives): the full-size state of every
  // parameter on the CPU, under its name, for a checkpoint. Only rank 0 gets the values (other ranks: null).
  std::unique_ptr<OptimizerState> gather_state();
  // Takes this rank's pieces of a full-size state (a loaded checkpoint's); no communication.
  void load_state(OptimizerState& full);

  int64_t steps_taken() const;
  // Bytes of AdamW state this rank holds, and what an unsharded AdamW would hold for the same parameters.
  int64_t state_bytes() const;
  int64_t unsharded_state_bytes() const;

 private:
  struct Piece {
    size_t param;          // index into the reducer's params()
    size_t bucket;         // the parameter's bucket
    int64_t in_param = 0;  // first element of the piece within the flattened parameter
    int64_t in_shard = 0;  // ... and within this rank's slice of the bucket
    int64_t numel = 0;
  };
  std::vector<std::string> names_;  // per reducer parameter
  std::vector<Piece> pieces_;
  std::unique_ptr<AdamW> adamw_;  // over the pieces, named as their parameters
  GradReducer& reducer_;
  ProcessGroup& group_;
};

}  // namespace tokamak
