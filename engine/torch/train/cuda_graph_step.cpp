// The training step as one CUDA graph (see cuda_graph_step.h).
#include "engine/torch/train/cuda_graph_step.h"

#include <ATen/autocast_mode.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/full.h>

#include <exception>
#include <optional>

#include "engine/base/util/error.h"

#ifdef TOKAMAK_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tokamak {

#ifdef TOKAMAK_WITH_CUDA
struct CudaGraphStep::Impl {
  explicit Impl(c10::DeviceIndex index)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, index)),
        before(c10::cuda::getCurrentCUDAStream(index)) {}
  c10::cuda::CUDAStream stream, before;
  std::optional<c10::cuda::CUDAStreamGuard> on_stream;
  at::cuda::CUDAGraph graph;
  at::Tensor inputs, targets, lr;  // the buffers the graph reads
  GraphStepResult result;          // the graph's outputs
  int64_t calls = 0;
  bool captured = false;
};

CudaGraphStep::CudaGraphStep(const c10::Device& device) {
  if (!device.is_cuda())
    throw Error("speed.cuda_graphs captures CUDA kernels, but the run is on " + device.str(),
                "set speed.cuda_graphs=false");
  const c10::DeviceIndex index = device.has_index() ? device.index() : c10::cuda::current_device();
  impl_ = std::make_unique<Impl>(index);
  impl_->before.synchronize();  // the model's and the optimizer's set-up ran on the stream before
  impl_->on_stream.emplace(impl_->stream);
}

CudaGraphStep::~CudaGraphStep() {
  if (!impl_) return;
  try {
    impl_->stream.synchronize();  // what the run does after the loop goes on the stream before
  } catch (...) {}
  impl_->on_stream.reset();
}

GraphStepResult CudaGraphStep::step(const at::Tensor& inputs, const at::Tensor& targets, double lr,
                                    const GraphStepBody& body, const std::function<void()>& before_capture) {
  Impl& m = *impl_;
  if (!m.lr.defined()) m.lr = at::full({}, lr, inputs.options().dtype(at::kFloat));
  m.lr.fill_(lr);  // a kernel on the stream: no host sync
  if (m.calls++ < kEagerSteps) return body(inputs, targets, m.lr);
  const bool first = !m.captured;
  if (first) {
    m.inputs = at::empty_like(inputs), m.targets = at::empty_like(targets);
    m.inputs.copy_(inputs, /*non_blocking=*/true), m.targets.copy_(targets, /*non_blocking=*/true);
    before_capture();
    // The eager steps' blocks stay cached in the allocator's shared pool, which the graph's private pool cannot
    // reuse: hand them back first, or a step near the card's size would need its memory twice.
    c10::cuda::CUDACachingAllocator::emptyCache();
    // Autocast's cache of cast weights must not outlive the capture (PyTorch's make_graphed_callables requires
    // it off). Thread-local capture mode: the loader's thread may touch the pinned-memory allocator meanwhile.
    const bool cache = at::autocast::is_autocast_cache_enabled();
    at::autocast::set_autocast_cache_enabled(false);
    try {
      m.graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
      m.result = body(m.inputs, m.targets, m.lr);
      m.graph.capture_end();
    } catch (const std::exception& e) {
      try {
        m.graph.capture_end();  // ends the capture, so the stream is usable again for what the run does next
      } catch (...) {}
      at::autocast::set_autocast_cache_enabled(cache);
      throw Error(std::string("speed.cuda_graphs: capturing the training step failed: ") + e.what(),
                  "set speed.cuda_graphs=false to train with the kernels launched one by one");
    }
    at::autocast::set_autocast_cache_enabled(cache);
    m.captured = true;
  } else {
    if (inputs.sizes() != m.inputs.sizes() || targets.sizes() != m.targets.sizes())
      throw Error("speed.cuda_graphs: a batch of another shape reached the captured step",
                  "this is a bug: config_problems should have refused the setting that changes the batch's shape");
    m.inputs.copy_(inputs, /*non_blocking=*/true), m.targets.copy_(targets, /*non_blocking=*/true);
  }
  m.graph.replay();
  GraphStepResult r = m.result;
  r.body_ran = first;
  return r;
}

bool CudaGraphStep::captured() const { return impl_->captured; }

#else

struct CudaGraphStep::Impl {};
CudaGraphStep::CudaGraphStep(const c10::Device&) {
  throw Error("speed.cuda_graphs needs LibTorch with CUDA, and this build has none", "set speed.cuda_graphs=false");
}
CudaGraphStep::~CudaGraphStep() = default;
GraphStepResult CudaGraphStep::step(const at::Tensor&, const at::Tensor&, double, const GraphStepBody&,
                                    const std::function<void()>&) {
  return {};
}
bool CudaGraphStep::captured() const { return false; }

#endif

}  // namespace tokamak
