// Device queries: which devices there are, what they are called, how much memory a run holds. The
// trainer's memory metrics and the run's start record read them; so do the studio and the CLI.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace tokamak {

int cuda_device_count();
// "cpu" | "cuda" | "cuda:N" → a device (validated by config_problems first).
c10::Device parse_device(const std::string& name);
std::string device_name(const c10::Device& device);  // GPU model name, or the CPU model
std::string cuda_runtime_version();                  // "" without CUDA
std::string host_name();

struct MemoryUse {
  int64_t allocated = 0;  // CUDA: bytes in tensors; CPU: resident set size
  int64_t reserved = 0;   // CUDA: bytes held by the caching allocator; CPU: 0
  int64_t peak = 0;       // CUDA: peak allocated since the last reset; CPU: peak resident set size
};
MemoryUse memory_use(const c10::Device& device);
void reset_peak_memory(const c10::Device& device);
void synchronize(const c10::Device& device);

}  // namespace tokamak
