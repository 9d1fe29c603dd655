// One optimizer step's forward and backward over its micro-batches, kept apart from the loop so that tests
// can prove what it computes (e.g. that k micro-batches of B/k give the gradients of one batch of B).
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>

#include "engine/base/config/choices.h"  // Precision
#include "engine/torch/train/loader.h"

namespace tokamak {

class GPTImpl;
class GradReducer;
class StepProfile;

// speed.precision through its table (engine/base/config/choices.h): unknown and not-implemented values throw.
Precision parse_precision(const std::string& name);  // for a name outside a Config (test_gpu's table)
// Process-wide math modes for a precision (TF32 for matmuls and cuDNN) and the SDPA backend (speed.sdpa_backend:
// "auto" = LibTorch's choice); call once before training.
void apply_math_mode(Precision precision, SdpaBackend sdpa_backend = SdpaBackend::kAuto);

struct StepOutput {
  at::Tensor loss;  // scalar: mean loss over the micro-batches, on the device (reading it syncs)
};

// Runs forward + backward on `micro_steps` batches from next_batch(micro), each loss scaled by 1/micro_steps
// (and by loss_scale, for fp16), so gradients add up to those of the mean loss. Gradients accumulate into
// the parameters' .grad; the caller zeroes them before and steps the optimizer after.
// Data parallel: with a reducer, the last micro-step's backward all-reduces the gradients as they become
// ready, and they are the mean over ranks when this returns (the loss stays this rank's own).
// With a profile (report steps), each micro-step's data wait, forward and backward, and the wait for the
// all-reduce after the last backward, are laps of it (engine/torch/metrics/step_profile.h).
StepOutput forward_backward(GPTImpl& model, const std::function<Batch(int64_t micro)>& next_batch, int64_t micro_steps,
                            Precision precision, const c10::Device& device, const at::Tensor& loss_scale = {},
                            GradReducer* reducer = nullptr, StepProfile* profile = nullptr);

// Mean loss over batches from next_batch(i), i < count, in eval mode without gradients. on_batch(done), when
// given, is called after each batch is queued: a long evaluation then beats for whoever watches for a stall.
double evaluate(GPTImpl& model, const std::function<Batch(int64_t i)>& next_batch, int64_t count, Precision precision,
                const c10::Device& device, const std::function<void(int64_t done)>& on_batch = {});

}  // namespace tokamak
