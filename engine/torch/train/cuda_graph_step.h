// speed.cuda_graphs: the whole training step — forward, backward, clipping, the skip decision and fused AdamW —
// captured once as a CUDA graph and replayed at every step after, so the step costs one launch instead of
// hundreds. Following PyTorch's whole-network capture recipe: every step of the run goes on a side stream of
// its own (capture refuses the default one); the first steps run eagerly on it, so cuBLAS's workspaces, cuDNN's
// attention plans and the allocator's blocks exist before the capture; the gradients are set to none once, just
// before it, and never again (the captured backward writes them in place at each replay); the inputs, targets and
// learning rate live in buffers the graph reads, filled before each replay. What cannot work in a graph (a shape
// that changes, a host sync in the step, a CPU) is refused by config_problems before the run starts.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <memory>

namespace tokamak {

// What a step leaves on the device for the loop to read at report steps.
struct GraphStepResult {
  at::Tensor loss, norm;
  bool body_ran = false;  // the step ran the body (eagerly, or captured and replayed once); false: a replay alone
};

// One whole step: reads its inputs, targets (B, T) and lr (a 0-dim float tensor) and touches nothing on the host.
using GraphStepBody =
    std::function<GraphStepResult(const at::Tensor& inputs, const at::Tensor& targets, const at::Tensor& lr)>;

class CudaGraphStep {
 public:
  static constexpr int kEagerSteps = 3;  // on the capture stream, before the capture (real training steps)

  // Moves the calling thread onto a side stream of `device` until destroyed (waiting for the work before).
  // Throws where LibTorch has no CUDA.
  explicit CudaGraphStep(const c10::Device& device);
  ~CudaGraphStep();
  CudaGraphStep(const CudaGraphStep&) = delete;
  CudaGraphStep& operator=(const CudaGraphStep&) = delete;

  // Steps 1..kEagerSteps run `body` eagerly; the next calls `before_capture` (zero the gradients: set them to
  // none), captures `body` and replays it; every later call only fills the buffers and replays. The result's
  // tensors of a replayed step are the graph's own: read them before the next step.
  GraphStepResult step(const at::Tensor& inputs, const at::Tensor& targets, double lr, const GraphStepBody& body,
                       const std::function<void()>& before_capture);
  bool captured() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tokamak
