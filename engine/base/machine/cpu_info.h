// This machine's CPU as /proc/cpuinfo names it: the model a run's start line, the studio's device box and the
// measurement caches' keys all spell the same way, and the instruction flags `auto` precision looks at.
// LibTorch-free, so that the studio and the `tokamak` front read them without loading LibTorch.
#pragma once
#include <cstdint>
#include <string>

namespace tokamak {

std::string cpu_model();  // "AMD EPYC"; "CPU" where /proc/cpuinfo names none
// Whether the first CPU's flags line holds FLAG ("avx512_bf16"): the first stands for all.
bool cpu_flag(const std::string& flag);
bool cpu_has_bf16_instructions();  // AVX-512 BF16 or AMX
// Physical memory in bytes.
int64_t physical_memory_bytes();

}  // namespace tokamak
