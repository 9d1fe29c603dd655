// Activation checkpointing for one block, as PyTorch's reentrant torch.utils.checkpoint: forward runs
// without recording a graph and keeps only the block's input; backward runs the block again with the same
// autocast state and random numbers (dropout), then back-propagates through that recomputed graph, which
// also accumulates the block's parameter gradients.
#include <ATen/autocast_mode.h>
#include <ATen/core/Generator.h>
#include <ATen/Context.h>
#include <torch/autograd.h>

#include "engine/torch/model/autocast.h"
#include "engine/torch/model/block.h"

namespace tokamak {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct RngState {
  torch::Tensor state;
  c10::DeviceType device = c10::kCPU;
};

at::Generator default_generator(c10::DeviceType device) {
  return device == c10::kCPU ? at::detail::getDefaultCPUGenerator()
                             : at::globalContext().defaultGenerator(c10::Device(device));
}

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, BlockImpl* block) {
    const auto device = x.device().type();
    ctx->saved_data["block"] = reinterpret_cast<int64_t>(block);
    ctx->saved_data["autocast"] = at::autocast::is_autocast_enabled(device);
    ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(at::autocast::get_autocast_dtype(device));
    auto gen = default_generator(device);
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      ctx->saved_data["rng"] = gen.get_state();
    }
    ctx->save_for_backward({x});
    torch::NoGradGuard no_grad;
    return block->forward(x);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    auto x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    auto* block = reinterpret_cast<BlockImpl*>(ctx->saved_data["block"].toInt());
    const auto device = x.device().type();
    auto gen = default_generator(device);
    torch::Tensor rng_now;
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      rng_now = gen.get_state();
      gen.set_state(ctx->saved_data["rng"].toTensor());
    }
    torch::Tensor y;
    {
      torch::AutoGradMode grad_on(true);
      AutocastGuard autocast(device, ctx->saved_data["autocast"].toBool(),
                             static_cast<c10::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
      y = block->forward(x);
    }
    {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(rng_now);
    }
    torch::autograd::backward({y}, {grad_out[0]});
    return {x.grad(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor checkpointed_forward(BlockImpl& block, const torch::Tensor& x) {
  return CheckpointFunction::apply(x, &block);
}

}  // namespace tokamak
