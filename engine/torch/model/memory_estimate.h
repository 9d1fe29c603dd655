// A run's memory estimate against its device: the arithmetic (engine/base/plan/memory_estimate.h) with `auto`
// precision made concrete as this process runs it, and the device's memory, read through LibTorch for a GPU.
#pragma once
#include <cstdint>
#include <string>

#include "engine/base/plan/memory_estimate.h"

namespace tokamak {

// estimate_memory(config, precision) with speed.precision=auto made concrete for the config's device here
// (resolved_precision, engine/torch/device/device.h). Checked against every bf16 peak the GPU sittings measured
// (tests/test_memory_estimate.cpp).
MemoryEstimate estimate_memory(const Config& config);
// The same for a CUDA fused classifier that holds at most CUDA_CHUNK_BYTES of logits at once.
MemoryEstimate estimate_memory(const Config& config, int64_t cuda_chunk_bytes);

// The memory of the device `config.device` names: physical memory for "cpu", the card's for CUDA.
int64_t device_memory_bytes(const std::string& device);
// memory_problem(config, precision, available) with `auto` made concrete here.
std::string memory_problem(const Config& config, int64_t available);
// Throws Error with memory_problem() against the config's device, before anything is allocated.
void check_memory(const Config& config);

}  // namespace tokamak
