// The phases of a training step that the step profile measures (engine/torch/metrics/step_profile.h) and the names
// of their metrics, in the order the step runs them. Header-only and free of LibTorch: the store's
// scoreboard (`runs compare`) and the studio's stacked bars read the same list.
#pragma once
#include <array>

namespace tokamak {

enum class Phase { kData, kForward, kHead, kBackward, kAllreduce, kOptimizer, kOther };
inline constexpr int kPhaseCount = 7;

struct PhaseName {
  const char* metric;  // the step event's metric, in ms per step
  const char* label;   // for tables and legends
};
// data: waiting for the batch (and its copy to the device); head: the fused classifier (speed.layers=fused), which
// computes the loss and the gradients of its input and weight together, inside the forward call — counted apart,
// so that forward and backward are the blocks' own (native layers have no such phase: their head's forward is
// in forward, its backward in backward); all-reduce: the gradients' all-reduce that
// backward did not hide, and the loss's (data parallel only); optimizer: clipping, the skip decision and
// AdamW; other: the rest (zero_grad, the report's own reads).
inline const std::array<PhaseName, kPhaseCount>& phase_names() {
  static const std::array<PhaseName, kPhaseCount> names = {{{"phase_data_ms", "data"},
                                                            {"phase_forward_ms", "forward"},
                                                            {"phase_head_ms", "head"},
                                                            {"phase_backward_ms", "backward"},
                                                            {"phase_allreduce_ms", "all-reduce"},
                                                            {"phase_optimizer_ms", "optimizer"},
                                                            {"phase_other_ms", "other"}}};
  return names;
}

}  // namespace tokamak
