// The training run: builds data, model and optimizer from a config, runs the loop, and reports through an
// EventSink. Runs on any thread; stop and pause are flags it polls every step.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/run/events.h"

namespace tokamak {

struct DistEnv;

}  // namespace tokamak
namespace at {
class Tensor;
}
namespace tokamak {

struct TrainControl {
  std::atomic<bool> stop{false};    // finish the current step, write a checkpoint, end as "stopped"
  std::atomic<bool> pause{false};   // hold between steps until cleared (or stop is set)
  std::atomic<bool> sample{false};  // write a sample at the end of the next step (rank 0), then clear
  // > 0: end the run as "stopped" after this step, with its checkpoint, while the schedule still follows
  // train.steps: how a sweep's early stopping halts a trial at a rung so that it can resume bit-exact.
  int64_t halt_at_step = 0;
  // The uid of a new run ("" = a random one; a resumed run keeps its checkpoint's). The CLI picks it, so that
  // the run folder and its journal exist before the trainer starts (engine/base/run/run_folder.h).
  std::string run_uid;
  // false: a throwaway run (a bench rung, a find-batch try) writes no checkpoint at all, not even its last: a
  // GPT-2 124M one is 1.5 GB that nobody reads.
  bool checkpoints = true;
  // For tests and tools: called after each step's backward, before the skip decision, with the step number
  // (1-based) and the model's parameters (gradients in .grad()). Tests poison a gradient here.
  std::function<void(int64_t step, const std::vector<at::Tensor>& params)> gradient_hook;
  // For tests: called with each micro-batch's tokens (inputs, targets) before the step trains on them, with the
  // step (1-based) and the data position it reads (the step plus the steps a rollback passed over). Tests put a
  // window of garbage tokens at a known position here.
  std::function<void(int64_t step, int64_t data_step, at::Tensor& inputs, at::Tensor& targets)> batch_hook;
  // Metrics added to the run's first step report, asked for then (the start's measurements are cached by then):
  // what `tokamak plan` says of this run on this device (plan_tok_s, plan_step_ms), kept with the run so the
  // prediction can be held against what it measured.
  std::function<Metrics()> first_report;
};

// Config problems throw tokamak::Error before any work. Once the run has started, every failure is
// reported as on_end with status "failed" (and returned), never thrown.
// A config with dist.gpus > 1 is refused here: it needs one process per rank (`tokamak train --gpus N`).
EndEvent train(const Config& config, EventSink& sink, TrainControl* control = nullptr);

// One process of a data-parallel group (engine/torch/parallel/dist_env.h; world_size 1 is the same as train() above).
// dist.gpus becomes the group's size. Rank 0 sends every event and writes checkpoints and samples; the
// other ranks send only on_end. Stop is agreed by all ranks at report steps (train.log_every); pause is
// not offered. A rank that dies or hangs ends the others as failed within dist.timeout_s.
EndEvent train(const Config& config, EventSink& sink, TrainControl* control, const DistEnv& dist);

// The config a run trains with, made and checked once: dist.gpus set to the group's size, `auto` resolved for this
// machine (precision, then layers), then every check: the keys (validate_config), what the device can do (bf16,
// fp8) and whether the run fits in its memory. Throws tokamak::Error with the first problem. train() is
// train_prepared(prepare_run(...)); a program that needs the resolved config first (to name the run) calls the two.
Config prepare_run(const Config& config, const DistEnv& dist);
// train() on what prepare_run returned: nothing is resolved or checked again.
EndEvent train_prepared(const Config& prepared, EventSink& sink, TrainControl* control, const DistEnv& dist);

// speed.precision=auto made concrete for a run of C with `processes` on this machine: as resolved_precision
// (engine/torch/device/device.h), after measuring, once per machine, thread count and LibTorch, both GEMM rates of a CPU
// with bf16 instructions (the flags do not say bf16 is the faster: cpu_peak.h, cpu_bf16_pays).
Precision run_precision(const Config& c, int processes = 1);

}  // namespace tokamak
