// speed.precision=fp16: the dynamic loss scale that keeps fp16's small gradients from underflowing (PyTorch's
// GradScaler, with LibTorch's own ops). The loss is multiplied by the scale before backward; the gradients are
// unscaled in place before clipping, and checked for inf/NaN in the same pass. A step with any non-finite gradient
// is skipped and the scale multiplied by `backoff`; after `interval` good steps in a row it is multiplied by
// `growth`. The scale and the count of good steps live on the device, so nothing here syncs the host.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tokamak {

struct LossScaleOptions {
  double init = 65536;  // PyTorch GradScaler's defaults
  double growth = 2;
  double backoff = 0.5;
  int64_t interval = 2000;
};

class LossScaler {
 public:
  LossScaler(const LossScaleOptions& o, const c10::Device& device);
  // (1,) float32 on the device: what forward_backward multiplies each loss by.
  const at::Tensor& scale() const { return scale_; }
  // Divides every defined .grad of PARAMS by the scale in place; returns found_inf, (1,) float32 on the device:
  // 1 when any gradient held an inf or a NaN (the step must not update the weights), else 0.
  at::Tensor unscale(const std::vector<at::Tensor>& params) const;
  // 1 / scale, (1,) float32 on the device, computed as GradScaler does (in double, then float): for a caller that
  // unscales gradients it holds elsewhere (ZeRO-1's reduced slices).
  at::Tensor inv_scale() const;
  // After the step, taken or skipped: backoff on found_inf, growth after `interval` good steps in a row.
  void update(const at::Tensor& found_inf);
  double scale_value() const;  // reads the device (a host sync): for reports only
  // For checkpoints: the scale (float32, written exactly) and the good steps since its last change, as JSON; a
  // resume from it continues bit for bit.
  std::string state_json() const;
  void load_state_json(const std::string& json);

 private:
  LossScaleOptions o_;
  at::Tensor scale_;           // (1,) float32
  at::Tensor growth_tracker_;  // (1,) int32: good steps since the scale last changed
};

}  // namespace tokamak
