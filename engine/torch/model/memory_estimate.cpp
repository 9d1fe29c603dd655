// A run's memory estimate against its device (see memory_estimate.h).
#include "engine/torch/model/memory_estimate.h"

#include <algorithm>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/machine/cpu_info.h"
#include "engine/base/util/error.h"
#include "engine/torch/device/device.h"

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace tokamak {

MemoryEstimate estimate_memory(const Config& c) { return estimate_memory(c, kClassifierCudaChunkBytes); }

MemoryEstimate estimate_memory(const Config& c, int64_t cuda_chunk_bytes) {
  return estimate_memory(c, resolved_precision(c.speed.precision, c.device), cuda_chunk_bytes);
}

int64_t device_memory_bytes(const std::string& device) {
  int index = -1;
  if (parse_device_kind(device, &index) == DeviceKind::kCpu) return physical_memory_bytes();
#ifdef TOKAMAK_WITH_CUDA
  return static_cast<int64_t>(at::cuda::getDeviceProperties(std::max(index, 0))->totalGlobalMem);
#else
  throw Error("device '" + device + "' needs a CUDA build of LibTorch", "set device=cpu");
#endif
}

std::string memory_problem(const Config& c, int64_t available) {
  return memory_problem(c, resolved_precision(c.speed.precision, c.device), available);
}

void check_memory(const Config& c) {
  if (!c.memory_check) return;
  const std::string problem = memory_problem(c, device_memory_bytes(c.device));
  if (!problem.empty())
    throw Error(problem,
                "shrink the model or train.batch_size, turn on speed.activation_checkpointing, or set "
                "memory_check=false if you know better");
}

}  // namespace tokamak
