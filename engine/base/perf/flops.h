// The arithmetic behind MFU: FLOPs per token of a training step, and the datasheet peak of a device.
#pragma once
#include <cstdint>
#include <string>

namespace tokamak {

// FLOPs per token of one training step (forward + backward): 6·N + 12·L·C·T, N without position embeddings.
double flops_per_token(int64_t n_flop_params, int64_t n_layer, int64_t n_embd, int64_t context);

// Dense peak FLOP/s of the device for a precision ("fp32", "tf32", "bf16", ...); -1 when unknown (CPUs).
double peak_flops(const std::string& device_name, const std::string& precision);

}  // namespace tokamak
