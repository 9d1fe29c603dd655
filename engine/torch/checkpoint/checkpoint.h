// Checkpoints: one safetensors file per checkpoint (data only: nothing in it is ever executed) holding the
// model weights under Tokamak's parameter names ("model.blocks.0.attn.c_attn.weight"), the AdamW state
// ("optimizer.exp_avg.NAME", ...; Muon's momentum "optimizer.muon_momentum.NAME"), the RNG state ("rng.cpu",
// "rng.cuda"), and in its metadata the step, the token count, the data position (batches depend only on the step
// and the offset rollbacks added, in the `health` metadata), the run uid, the full config as JSON, and a CRC-32 of
// every tensor and of the metadata. The format is described in docs/ARCHITECTURE.md. Code outside this file names checkpoints through checkpoint_path() and never
// assumes the extension.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/run/checkpoint_files.h"

namespace tokamak {

class GPTImpl;
class OptimizerState;

struct CheckpointInfo {
  std::string run_uid;
  std::string config_json;
  int64_t step = 0;    // optimizer steps done
  int64_t tokens = 0;  // tokens trained on
  std::string device;  // where the run trained (informative: tensors are stored device-free)
  // Time to a target loss across resumes: training seconds so far (evaluations, samples and checkpoints left
  // out) and the step at which eval.target_val_loss was reached (0: not yet). Absent in older checkpoints: 0.
  double train_seconds = 0;
  int64_t target_step = 0;
  // How the run watches itself, as JSON (engine/torch/train/health.h): the data position's offset after rollbacks, the
  // spikes so far, the lowered learning rate's end and the spike detector's window. "" in older checkpoints.
  std::string health;
  // speed.precision=fp16's loss scale and its good steps (engine/torch/train/loss_scaler.h), as JSON; "" otherwise.
  std::string loss_scale;
};

// checkpoint_path, list_checkpoints: engine/base/run/checkpoint_files.h (LibTorch-free: the studio lists them).
// Before step 1: creates `dir`, removes temporaries left by dead processes, and throws an Error when the
// folder is not writable or has less than `bytes_needed` free (twice a checkpoint: old and new coexist). Given
// the run's uid, it also throws when the folder holds another run's checkpoints: files are named by step
// alone, so two runs in one folder would overwrite each other's step_N. A step_N.safetensors that is not a
// Tokamak checkpoint (a user's file, a link, a FIFO) is refused always; with `only_checkpoints` (a folder the user
// named as checkpoint.dir, not the run's own folder) so is any other file in it (engine/base/util/output_path.h).
void prepare_checkpoint_dir(const std::string& dir, uint64_t bytes_needed, const std::string& run_uid = {},
                            bool only_checkpoints = false);
// Throws an Error naming both runs when the checkpoint at `path` is not one of run `run_uid`'s: a run resumed
// from it would train another run's weights under its own name.
void check_checkpoint_owner(const std::string& path, const std::string& run_uid);
// Bytes a checkpoint of this model (and optimizer, when given) takes on disk, near enough.
uint64_t checkpoint_bytes(const GPTImpl& model, bool with_optimizer);
// Keeps the newest `keep` checkpoints of run `run_uid` in `dir` (keep <= 0: all) and deletes its older ones;
// other runs' checkpoints in a shared folder are never touched.
void prune_checkpoints(const std::string& dir, int64_t keep, const std::string& run_uid);

// Writes durably (unique temporary, fsync, rename, fsync of the folder); replaces only a checkpoint of the same
// run, never another run's, a user's file or a link.
// optimizer may be null (weights only); it is AdamW, or a ZeRO-1 run's gathered full-size state
// (engine/torch/parallel/zero.h): the file is the same.
void save_checkpoint(const std::string& path, const GPTImpl& model, OptimizerState* optimizer,
                     const CheckpointInfo& info, const c10::Device& device);
// The config and position of a checkpoint, from its header alone (no tensor is read).
CheckpointInfo read_checkpoint_info(const std::string& path);
// Loads into a model built from the checkpoint's config: every name, dtype, shape and checksum is checked
// first against what the model has, and the first problem is a one-line Error naming the tensor. Tensors are
// read into CPU memory and copied into the model's (and optimizer's) own tensors, on whatever device they are.
// With an optimizer (resuming) dtypes must match exactly; without one (sampling, export) float weights are
// converted to the model's float dtype. restore_rng also restores the CPU (and `device`'s CUDA) generator.
CheckpointInfo load_checkpoint(const std::string& path, GPTImpl& model, OptimizerState* optimizer, bool restore_rng,
                               const c10::Device& device);

}  // namespace tokamak
