// A run's checkpoint files by name: DIR/step_N.safetensors, found by step. LibTorch-free, so that the studio and the
// `tokamak` front list them; writing and reading them is engine/checkpoint/checkpoint.h's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

// DIR/step_N.safetensors.
std::string checkpoint_path(const std::string& dir, int64_t step);
// A run's checkpoints in `dir`, oldest step first (files named by checkpoint_path()).
std::vector<std::string> list_checkpoints(const std::string& dir);

}  // namespace tokamak
