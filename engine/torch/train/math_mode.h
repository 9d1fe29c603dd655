// The run's precision as scopes: which autocast a precision trains under, and a guard that puts LibTorch's
// process-wide math modes (TF32, the enabled SDPA backends) back as they were. Training sets those modes once
// (apply_math_mode, step.h); sampling and the GPU tests change them for a scope and must not leak the change
// into the next run of a bench or the next test, whatever throws in between.
#pragma once
#include <ATen/Context.h>
#include <c10/core/ScalarType.h>

#include "engine/base/config/choices.h"  // Precision

namespace tokamak {

// bf16 and fp16 train under autocast (fp32 master weights); fp32, tf32 and bf16-pure do not.
inline bool uses_autocast(Precision p) { return p == Precision::kBf16 || p == Precision::kFp16; }
inline c10::ScalarType autocast_dtype(Precision p) { return p == Precision::kFp16 ? c10::kHalf : c10::kBFloat16; }

class MathModeGuard {
 public:
  MathModeGuard()
      : ctx_(at::globalContext()), tf32_cublas_(ctx_.allowTF32CuBLAS()), tf32_cudnn_(ctx_.allowTF32CuDNN()),
        flash_(ctx_.userEnabledFlashSDP()), efficient_(ctx_.userEnabledMemEfficientSDP()),
        cudnn_(ctx_.userEnabledCuDNNSDP()), math_(ctx_.userEnabledMathSDP()) {}
  ~MathModeGuard() {
    ctx_.setAllowTF32CuBLAS(tf32_cublas_);
    ctx_.setAllowTF32CuDNN(tf32_cudnn_);
    ctx_.setSDPUseFlash(flash_);
    ctx_.setSDPUseMemEfficient(efficient_);
    ctx_.setSDPUseCuDNN(cudnn_);
    ctx_.setSDPUseMath(math_);
  }
  MathModeGuard(const MathModeGuard&) = delete;
  MathModeGuard& operator=(const MathModeGuard&) = delete;

 private:
  at::Context& ctx_;
  bool tf32_cublas_, tf32_cudnn_, flash_, efficient_, cudnn_, math_;
};

}  // namespace tokamak
