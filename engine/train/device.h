// The machine the run is on: devices, threads, memory, and the datasheet peak used for MFU.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

namespace tokamak {

int cuda_device_count();
// "cpu" | "cuda" | "cuda:N" → a device (validated by config_problems first).
c10::Device parse_device(const std::string& name);
// Sets LibTorch's intra-op threads (0 = all cores) and keeps freed memory in the process (see device.cpp);
// returns the number of threads in use.
int configure_cpu(int64_t threads);
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

// Dense peak FLOP/s of the device for a precision ("fp32", "tf32", "bf16", ...); -1 when unknown (CPUs).
double peak_flops(const std::string& device_name, const std::string& precision);

}  // namespace tokamak
