// Checkpoints: one file holding the named parts of a run — model, optimizer, step (the data position, since
// batches depend only on the step), random-number state, the run's uid and its full config as JSON.
// Written to a temporary name and renamed, so a crash mid-save never leaves a torn checkpoint.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace tokamak {

class GPTImpl;
class AdamW;

struct CheckpointInfo {
  std::string run_uid;
  std::string config_json;
  int64_t step = 0;    // optimizer steps done
  int64_t tokens = 0;  // tokens trained on
};

void save_checkpoint(const std::string& path, const GPTImpl& model, const AdamW& optimizer,
                     const CheckpointInfo& info, const c10::Device& device);
// The config and position of a checkpoint, without building a model (e.g. to resume with its config).
CheckpointInfo read_checkpoint_info(const std::string& path);
// Loads weights (and, when given, the optimizer state and the RNG state) into a model built from the same config.
CheckpointInfo load_checkpoint(const std::string& path, GPTImpl& model, AdamW* optimizer, bool restore_rng,
                               const c10::Device& device);

}  // namespace tokamak
