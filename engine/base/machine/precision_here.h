// speed.precision=auto made concrete as a run here would make it, without LibTorch: for the studio's memory estimate
// and plan, before the run (which resolves it again with LibTorch, engine/torch/device/device.h's resolved_precision, and
// records what it trained with). The same rule from the same facts: a GPU's compute capability (NVML here, CUDA
// there) and a CPU's bf16 instructions with both GEMM rates as runs here measured and cached them.
#pragma once
#include <string>

#include "engine/base/config/choices.h"

namespace tokamak {

// PRECISION unless it is auto; then bf16 on a GPU of compute capability 8.0 or later, fp16 on 7.x, fp32 on
// older ones or a GPU not seen; on a CPU bf16 where it has AVX-512 BF16 or AMX and its bf16 GEMM was not measured
// slower than fp32 at the threads a run takes (every core given), else fp32. A device that cannot be read: fp32.
Precision precision_here(Precision precision, const std::string& device);
// What `auto` takes on this CPU for a run of THREADS threads: bf16 or fp32, as above.
Precision cpu_precision_here(int threads);

}  // namespace tokamak
