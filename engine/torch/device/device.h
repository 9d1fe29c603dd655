// Device queries: which devices there are, what they are called, how much memory a run holds. The
// trainer's memory metrics and the run's start record read them; so do the studio and the CLI.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "engine/base/machine/cpu_info.h"  // cpu_has_bf16_instructions, cpu_model

#include "engine/base/config/choices.h"

namespace tokamak {

int cuda_device_count();
// "cpu" | "cuda" | "cuda:N" → a device (validated by config_problems first).
c10::Device parse_device(const std::string& name);
std::string device_name(const c10::Device& device);  // GPU model name, or the CPU model
std::string cuda_runtime_version();                  // "" without CUDA
std::string pci_bus_id(const c10::Device& device);   // a GPU's "0000:3B:00.0" (NVML finds it by it); "" for a CPU
std::string host_name();

struct MemoryUse {
  int64_t allocated = 0;  // CUDA: bytes in tensors; CPU: resident set size
  int64_t reserved = 0;   // CUDA: bytes held by the caching allocator; CPU: bytes jemalloc holds for reuse
  int64_t peak = 0;       // CUDA: peak allocated since the last reset; CPU: peak resident set size
};
MemoryUse memory_use(const c10::Device& device);
void reset_peak_memory(const c10::Device& device);
void synchronize(const c10::Device& device);

// Whether bf16 matmuls are the device's fast ones: CUDA compute capability 8.0 or later; a CPU with AVX-512 BF16
// or AMX (elsewhere LibTorch's bf16 GEMM is a scalar fallback, ~100× slower than fp32) on which a bf16 GEMM was
// not measured slower than an fp32 one (cpu_bf16_pays).
bool fast_bf16(const c10::Device& device);
// Whether fp16 with a loss scale is the fast choice where bf16 is not: CUDA compute capability 7.x (Turing's
// fp16 tensor cores). Never on a CPU.
bool fast_fp16(const c10::Device& device);
// "" unless PRECISION is a bf16 one and DEVICE a GPU older than compute capability 8.0 (a T4): then why, in a line.
std::string bf16_device_problem(Precision precision, const c10::Device& device);
// speed.precision=auto made concrete for this config's device: bf16 where fast_bf16, else fp16 where fast_fp16,
// else fp32. Runs record the resolved value, so a run's config says what it trained with.
Precision resolved_precision(Precision precision, const std::string& device);

}  // namespace tokamak
