// This machine's NVIDIA GPUs as a process that trains here would number them, read through NVML (the driver's
// library, opened at run time as machine_health.cpp opens it) instead of the CUDA runtime: the studio lists and
// names them, and makes `auto` precision concrete, without loading LibTorch or CUDA. The run itself asks CUDA again
// (engine/torch/device/device.h) and its start event names the GPU it got.
#pragma once
#include <string>
#include <vector>

namespace tokamak {

struct GpuFacts {
  std::string name;    // "NVIDIA H100 80GB HBM3", as CUDA names it
  int major = 0, minor = 0;  // compute capability
};

// Index = the CUDA device index: NVML's devices in its (PCI bus) order, narrowed and reordered by
// CUDA_VISIBLE_DEVICES where it lists indices (CUDA stops at the first entry it cannot read, as here). Empty
// without a driver. Read once per process.
const std::vector<GpuFacts>& gpus_seen();

}  // namespace tokamak
