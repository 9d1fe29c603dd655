// A run's checkpoint files by name: DIR/step_N.safetensors, found by step, and whose run each is. LibTorch-free, so
// that the studio and the `tokamak` front list them; writing and loading them is engine/torch/checkpoint/checkpoint.h's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// DIR/step_N.safetensors.
std::string checkpoint_path(const std::string& dir, int64_t step);
// A run's checkpoints in `dir`, oldest step first (files named by checkpoint_path()).
std::vector<std::string> list_checkpoints(const std::string& dir);
// The uid of the run that wrote the checkpoint at PATH, from its safetensors header's metadata alone (no tensor is
// read): what a resumed run is named by before it starts. Throws an Error naming the file when it is not a Tokamak
// checkpoint; the run checks the rest of it (format version, checksums) when it loads it.
std::string checkpoint_run_uid(const std::string& path);

}  // namespace tokamak
