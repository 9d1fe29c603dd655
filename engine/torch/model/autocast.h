// RAII autocast: mixed precision for a scope (bf16/fp16 matmuls, fp32 master weights), on CPU or CUDA.
// LibTorch has no `with torch.autocast(...)`; this is its C++ form.
#pragma once
#include <ATen/autocast_mode.h>

namespace tokamak {

class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, bool enabled, c10::ScalarType dtype = c10::kBFloat16)
      : device_(device), was_enabled_(at::autocast::is_autocast_enabled(device)),
        old_dtype_(at::autocast::get_autocast_dtype(device)) {
    at::autocast::set_autocast_enabled(device_, enabled);
    at::autocast::set_autocast_dtype(device_, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    // Leaving the outermost region drops the cached low-precision copies of the weights.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, was_enabled_);
    at::autocast::set_autocast_dtype(device_, old_dtype_);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  c10::ScalarType old_dtype_;
};

}  // namespace tokamak
