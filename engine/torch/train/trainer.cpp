// The training loop (see trainer.h; the run's set-up, checkpoints and samples are run_setup.cpp). Run::execute is
// the loop on one screen: per optimizer step, train_step (schedule → forward/backward over the micro-batches → clip
// → update, graphed or eager), report_step every log_every steps (the only host sync: metrics), periodic_work (the
// evaluation, samples and checkpoints, each when it is due) and stop_status. Skipped steps are counted in one place
// (Loop::count_on_device) wherever no step reads the host. Data parallel (engine/torch/parallel) adds four things: the
// gradient reducer inside forward/backward, the loss averaged over ranks, and at report steps the agreed stop;
// only rank 0 reports, samples and checkpoints. With dist.zero=1 (ZeRO-1) the clip and AdamW are the sharded ones
// of engine/torch/parallel/zero.h and a checkpoint first gathers the state from every rank.
#include "engine/torch/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <tuple>

#include "engine/torch/train/loader.h"
#include "engine/base/data/tokenizer.h"
#include "engine/torch/parallel/dist_env.h"
#include "engine/torch/parallel/reducer.h"
#include "engine/torch/parallel/zero.h"
#include "engine/torch/eval/eval_task.h"
#include "engine/torch/eval/scoring.h"
#include "engine/torch/generate/generate.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/autocast.h"
#include "engine/torch/model/memory_estimate.h"
#include "engine/base/util/cores.h"
#include "engine/torch/device/cpu_peak.h"
#include "engine/base/perf/flops.h"
#include "engine/torch/train/layer_stats.h"
#include "engine/torch/metrics/step_meter.h"
#include "engine/torch/metrics/step_profile.h"
#include "engine/torch/model/hf.h"
#include "engine/base/run/run_folder.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/device/device.h"
#include "engine/torch/kernels/fp8_linear.h"
#include "engine/torch/train/math_mode.h"
#include "engine/torch/train/cuda_graph_step.h"
#include "engine/torch/optim/muon.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/health.h"
#include "engine/torch/train/run.h"
#include "engine/torch/train/torch_error.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace detail {

// What the loop keeps from step to step, made once after the set-up.
struct Loop {
  Loop(const Config& c, const c10::Device& device, const GPT& model, const SpikeWatch& spikes)
      : fpt(flops_per_token(model->num_flop_parameters(), c.model.n_layer, c.model.n_embd, train_context(c))),
        // health.spike_action=skip or rollback decides before each update, so it reads the loss every step too.
        check_every_step(!(device.is_cuda() && c.speed.fused_adamw) || spikes.decides_each_step()),
        spike_action(spikes.action()),
        params(model->parameters()),
        profile(device),
        graphed(c.speed.cuda_graphs ? std::make_unique<CudaGraphStep>(device) : nullptr),
        profiling(c.train.profile && !graphed) {
    const auto counter = at::TensorOptions().device(device).dtype(at::kFloat);
    faults = at::zeros({}, counter), in_a_row = at::zeros({}, counter), scale_skips = at::zeros({}, counter);
  }
  // The one accounting of skipped steps where no step reads the host (graphed, or fused AdamW on CUDA): BAD is 1
  // when the step's loss or gradients were not finite, OVERFLOW (fp16) 1 when the scaled gradients overflowed, the
  // loss scale's to handle and no fault of the run. Read at report steps.
  void count_on_device(const at::Tensor& bad, const at::Tensor& overflow = {}) {
    const at::Tensor fault = overflow.defined() ? bad * (1 - overflow) : bad;
    faults.add_(fault);
    in_a_row.add_(fault).mul_(fault);
    if (overflow.defined()) scale_skips.add_(overflow);
  }
  void lap(Phase p) {
    if (profiling) profile.lap(p);
  }

  const double fpt;  // FLOPs a token, for MFU
  const bool check_every_step;
  const SpikeAction spike_action;
  std::vector<at::Tensor> params;
  // Without a host read per step, warn looks at each step's loss and norm (and the layers' gradient jumps, where
  // measured) at the next report.
  struct Unread {
    int64_t step;
    at::Tensor values, jump;
  };
  std::vector<Unread> unread;
  // Rank 0, with metrics.layers_every >= 0 or a spike watch: the per-layer statistics, and the layer a spike names.
  std::unique_ptr<LayerStats> layers;
  StepMeter meter;
  int64_t window_tokens = 0;  // trained since the last report (warm-ups make steps of different sizes)
  // Every step of a report window is profiled, the same steps the meter times: the phases beside step_ms are the
  // mean of those steps and add up to it (the rest between steps is other). No mark syncs the host.
  StepProfile profile;
  // speed.cuda_graphs: the step captured once and replayed (engine/torch/train/cuda_graph_step.h). Inside a graph its
  // phases cannot be timed apart: the step is timed whole, with no step profile.
  std::unique_ptr<CudaGraphStep> graphed;
  const bool profiling;
  at::Tensor faults, in_a_row, scale_skips;  // count_on_device's counts
};

// The loop on one screen: a step, its report, the periodic work each part decides is due, and whether to stop.
EndEvent Run::execute() {
  EndEvent end;
  started_ = last_checkpoint_ = Clock::now();
  set_up();
  Loop l(c_, device_, model_, *spikes_);
  if (main_ && (c_.metrics.layers_every >= 0 || l.spike_action != SpikeAction::kOff))
    l.layers = std::make_unique<LayerStats>(*model_);
  int64_t step = start_step_;
  end.status = "finished";
  loop_started_ = Clock::now();
  try {
    while (step < c_.train.steps) {
      if (!group_ && !wait_while_paused()) {
        end.status = "stopped";
        break;
      }
      share_cores();
      StepResult r = train_step(l, step);
      ++step;
      l.meter.step();
      tokens_ += tokens_at_step(c_, step - 1);
      l.window_tokens += tokens_at_step(c_, step - 1);
      if (!r.skip_reason.empty()) count_skipped(step, skipped_in_a_row_ + 1, skipped_ + 1, r.skip_reason);
      if (r.spike.spike) {
        if (l.layers && r.jump.defined()) std::tie(r.spike.layer, r.spike.layer_jump) = l.layers->jumped_most(r.jump);
        const int64_t back_to = l.spike_action == SpikeAction::kRollback ? roll_back(step, r.spike) : -1;
        if (back_to >= 0) {  // the steps after the checkpoint are undone: nothing of them is reported
          step = back_to;
          continue;
        }
        sink_.on_spike(spikes_->event(step, tokens_, seconds_since_start(), r.spike,
                                      l.spike_action == SpikeAction::kWarn ? "warned" : "skipped"));
      }
      const bool report = reports_at(step);
      if (report) report_step(l, step, r);
      const bool target_reached = periodic_work(l, step, report);
      if (const char* status = stop_status(step, report, target_reached)) {
        end.status = status;
        break;
      }
    }
    if (step > start_step_ || end.status == "finished") checkpoint(step);
  } catch (const std::exception& e) {
    end.status = "failed";
    end.error = torch_error_text(e);  // one line, never LibTorch's backtrace
    checkpoint_last_good(l, step);
  }
  end.step = step;
  end.tokens = tokens_;
  end.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  if (!main_ && end.status == "failed") end.error = "rank " + std::to_string(dist_.rank) + ": " + end.error;
  end_sink_.on_end(end);
  return end;
}

// The batch of micro-step MICRO of STEP. train.batch_warmup / train.seq_warmup take the first rows and tokens of
// the step's own batches, so the data position (and a resume) does not depend on them.
Batch Run::batch_for(int64_t step, int64_t micro) {
  const int64_t rows = batch_rows_at(c_, step), len = seq_len_at(c_, step);
  Batch b = loader_->train_batch(spikes_->data_step(step), micro, accum_);
  if (control_ && control_->batch_hook) control_->batch_hook(step + 1, spikes_->data_step(step), b.inputs, b.targets);
  if (rows < b.inputs.size(0) || len < b.inputs.size(1)) {
    b.inputs = b.inputs.narrow(0, 0, rows).narrow(1, 0, len);
    b.targets = b.targets.narrow(0, 0, rows).narrow(1, 0, len);
  }
  if (micro == 0 && probe_due_) probe_tokens_ = b.inputs.narrow(0, 0, 1).clone();  // the per-layer probe's sequence
  return b;
}

// One optimizer step (STEP counts from 0): the schedule, forward and backward over the micro-batches, the clip and
// the update, graphed or launched kernel by kernel.
StepResult Run::train_step(Loop& l, int64_t step) {
  if (l.profiling) l.profile.begin();
  StepResult r;
  r.lr = learning_rate(c_, step) * spikes_->lr_scale(step);
  probe_due_ = l.layers && layers_at(step + 1);
  if (probe_due_) l.layers->keep_weights();  // the update is measured against the weights before it
  if (reducer_) reducer_->zero_grad();
  else if (!l.graphed || !l.graphed->captured()) optimizer_->zero_grad();  // a graph refills its gradients in place
  if (l.graphed) graphed_step(l, step, r);
  else eager_step(l, step, r);
  // A graph's gradients are read after it, clipped: the group that jumped is still the one named.
  if (l.layers && l.spike_action != SpikeAction::kOff && !r.jump.defined()) r.jump = l.layers->grad_jump();
  if (l.spike_action == SpikeAction::kWarn && !l.check_every_step)
    l.unread.push_back({step + 1,
                        at::stack({r.out.loss.detach().to(at::kFloat).reshape({}),
                                   r.norm.detach().to(at::kFloat).reshape({})}),
                        r.jump});
  return r;
}

void Run::graphed_step(Loop& l, int64_t step, StepResult& r) {
  const Batch batch = batch_for(step, 0);
  const GraphStepResult g = l.graphed->step(
      batch.inputs, batch.targets, r.lr,
      [&](const at::Tensor& inputs, const at::Tensor& targets, const at::Tensor& device_lr) {
        const StepOutput o = forward_backward(
            *model_, [&](int64_t) { return Batch{inputs, targets}; }, 1, precision_, device_, {}, nullptr, nullptr);
        RECORD_FUNCTION("tokamak::optimizer", std::vector<c10::IValue>());
        at::Tensor n = clip_grad_norm(l.params, c_.optimizer.grad_clip);
        at::Tensor bad = at::logical_or(~at::isfinite(o.loss), ~at::isfinite(n)).to(at::kFloat);
        optimizer_->step_device_lr(device_lr, bad);
        l.count_on_device(bad);
        return GraphStepResult{o.loss, n, true};
      },
      [&] { optimizer_->zero_grad(); });
  // A replay runs no host code: the host's count of AdamW's steps (checkpoints keep it) moves here.
  if (!g.body_ran) optimizer_->set_steps_taken(optimizer_->steps_taken() + 1);
  r.out.loss = g.loss, r.norm = g.norm;
}

void Run::eager_step(Loop& l, int64_t step, StepResult& r) {
  r.out = forward_backward(
      *model_, [&](int64_t micro) { return batch_for(step, micro); }, accum_, precision_, device_,
      scaler_ ? scaler_->scale().reshape({}) : at::Tensor(), reducer_.get(), l.profiling ? &l.profile : nullptr);
  if (group_) {
    // The global mean loss: all ranks then agree on a non-finite loss and skip or stop together.
    group_->all_reduce_sum(r.out.loss).wait();
    r.out.loss.div_(static_cast<double>(dist_.world_size));
    l.lap(Phase::kAllreduce);
  }
  if (control_ && control_->gradient_hook) control_->gradient_hook(step + 1, l.params);
  l.lap(Phase::kOther);
  // Clip, the skip decision and the update, in a profiler scope of their own (`bench --kernels`: optimizer).
  RECORD_FUNCTION("tokamak::optimizer", std::vector<c10::IValue>());
  // fp16: the gradients unscaled before the clip sees them. An overflow is the loss scale's to handle (the step
  // skipped, the scale lowered), not a fault of the run: it is counted apart and never a spike. Under data parallel
  // every rank holds the same all-reduced gradients, so every rank finds the same overflow; under ZeRO-1 each rank
  // checks its own slices, and the ranks' found_inf is all-reduced.
  at::Tensor overflow;
  if (scaler_) overflow = (sharded_ ? sharded_->unscale(scaler_->inv_scale()) : scaler_->unscale(l.params)).reshape({});
  // Before the clip, which scales every group alike: the jump a spike reports is the gradients' own.
  if (l.layers && l.spike_action != SpikeAction::kOff) r.jump = l.layers->grad_jump();
  r.norm = sharded_ ? sharded_->clip_grad_norm(c_.optimizer.grad_clip)  // the global norm of the shards
                    : clip_grad_norm(l.params, c_.optimizer.grad_clip);
  // One NaN or inf in any gradient makes the norm non-finite: with the loss, that decides the skip.
  const at::Tensor bad = at::logical_or(~at::isfinite(r.out.loss), ~at::isfinite(r.norm)).to(at::kFloat);
  const auto update = [&](const at::Tensor& found_inf) {
    if (sharded_) sharded_->step(r.lr, found_inf);
    else optimizer_->step(r.lr, found_inf);
  };
  if (l.check_every_step) {
    if (overflow.defined() && overflow.item<float>() != 0) {
      ++scale_skipped_;
    } else if (bad.item<float>() == 0) {
      skipped_in_a_row_ = 0;
      if (l.spike_action != SpikeAction::kOff) r.spike = spikes_->look(r.out.loss.item<double>(), r.norm.item<double>());
      if (!r.spike.spike || l.spike_action == SpikeAction::kWarn) update({});
    } else {
      const double loss = r.out.loss.item<double>();
      r.skip_reason = std::isfinite(loss) ? "gradients are " + non_finite_name(r.norm.item<double>())
                                          : "loss is " + non_finite_name(loss);
    }
  } else {
    update(overflow.defined() ? at::maximum(bad, overflow) : bad);
    l.count_on_device(bad, overflow);
  }
  if (scaler_) scaler_->update(overflow.reshape({1}));
  l.lap(Phase::kOptimizer);  // clip, the skip decision and AdamW
}

bool Run::reports_at(int64_t step) const {
  return step % c_.train.log_every == 0 || step == c_.train.steps || step == start_step_ + 1;
}

bool Run::layers_at(int64_t step) const {
  const int64_t every = c_.metrics.layers_every;
  return every >= 0 && reports_at(step) && (every == 0 || step % every == 0 || step == c_.train.steps);
}

// A report step: the host sync that reads the device's counts and late spikes, then every metric of the step,
// named here once (sinks pass them on without knowing them).
void Run::report_step(Loop& l, int64_t step, const StepResult& r) {
  if (!l.check_every_step)
    count_skipped(step, static_cast<int64_t>(l.in_a_row.item<float>()), static_cast<int64_t>(l.faults.item<float>()),
                  "non-finite loss or gradients");
  for (const Loop::Unread& u : l.unread) {  // warn on a GPU: the steps since the last report
    const at::Tensor v = u.values.to(at::kCPU);
    SpikeVerdict late = spikes_->look(v[0].item<double>(), v[1].item<double>());
    if (!late.spike) continue;
    if (l.layers && u.jump.defined()) std::tie(late.layer, late.layer_jump) = l.layers->jumped_most(u.jump);
    sink_.on_spike(spikes_->event(u.step, tokens_, seconds_since_start(), late, "warned"));
  }
  l.unread.clear();
  l.lap(Phase::kOther);
  synchronize(device_);
  const StepMeter::Window window = l.meter.close();
  StepEvent e;
  e.step = step, e.tokens = tokens_;
  e.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  const double tok_s = static_cast<double>(l.window_tokens) / window.seconds;
  l.window_tokens = 0;
  e.metrics.add("loss", r.out.loss.item<double>());  // left out when this step was skipped (not finite)
  e.metrics.add("lr", r.lr);
  e.metrics.add("grad_norm", r.norm.item<double>());
  e.metrics.add("step_ms", 1000.0 * window.seconds / static_cast<double>(window.steps));
  e.metrics.add("tok_s", tok_s);
  const double mfu = peak_ > 0 ? tok_s * l.fpt / (peak_ * c_.dist.gpus) : -1;  // tok_s is every rank's: per GPU
  if (mfu >= 0) e.metrics.add("mfu", mfu);
  const MemoryUse mem = memory_use(device_);
  e.metrics.add_count("mem_allocated", mem.allocated);
  e.metrics.add_count("mem_reserved", mem.reserved);
  e.metrics.add_count("mem_peak", mem.peak);
  if (!device_.is_cuda()) trim_cpu_allocator(mem.reserved);  // bounds what the allocator keeps
  e.metrics.add_count("skipped_steps", skipped_);
  if (scaler_) add_loss_scale_metrics(l, step, e.metrics);
  if (l.spike_action != SpikeAction::kOff) e.metrics.add_count("spikes", spikes_->total());
  if (sharded_) e.metrics.add_count("zero_saved_bytes", sharded_->unsharded_state_bytes() - sharded_->state_bytes());
  add_overlap_metrics(e.metrics);
  if (l.profiling) l.profile.add_to(e.metrics, group_ != nullptr, 1000.0 * window.seconds / window.steps);
  if (l.layers && layers_at(step)) {  // like the machine's readings, no part of a step's time (PERFORMANCE.md: cost)
    const auto read_start = Clock::now();
    l.layers->add_to(e.metrics, probe_tokens_);
    probe_tokens_ = at::Tensor();
    const double spent = std::chrono::duration<double>(Clock::now() - read_start).count();
    e.metrics.add("layers_ms", 1000 * spent);  // what they cost at this report (docs/PERFORMANCE.md)
    l.meter.exclude(spent);
  }
  if (machine_) {  // the readings are no part of a step: left out of the next window's time
    const auto read_start = Clock::now();
    machine_->add_to(e.metrics);
    l.meter.exclude(std::chrono::duration<double>(Clock::now() - read_start).count());
  }
  // Time left at the pace so far, evaluations, samples and checkpoints included (they are in the wall time).
  const double looped = std::chrono::duration<double>(Clock::now() - loop_started_).count();
  if (step > start_step_)
    e.metrics.add("eta_s", looped / static_cast<double>(step - start_step_) * (c_.train.steps - step));
  if (control_ && control_->first_report && !first_reported_)
    for (const MetricValue& v : control_->first_report()) e.metrics.add(v);
  first_reported_ = true;
  sink_.on_step(e);
  if (slowdown_)
    if (const auto message = slowdown_->report(e.metrics)) sink_.on_alert({"slowdown", step, *message});
  if (l.profiling) l.profile.reset();  // the next window starts
}

void Run::add_loss_scale_metrics(Loop& l, int64_t step, Metrics& metrics) {
  if (!l.check_every_step) scale_skipped_ = static_cast<int64_t>(l.scale_skips.item<float>());
  const double scale = scaler_->scale_value();
  metrics.add("loss_scale", scale);
  metrics.add_count("scale_skipped_steps", scale_skipped_);
  // Halved at every overflow, 2^-24 is 40 overflows in a row from the default: no scale makes the gradients
  // finite, so the model itself has diverged.
  if (scale < 0x1p-24)
    throw Error("the fp16 loss scale fell to " + std::to_string(scale) + " by step " + std::to_string(step) +
                    ": the gradients are not finite at any scale (the model diverged)",
                "lower optimizer.lr, or use speed.precision=bf16 or fp32");
}

// After STEP (counted from 1): the evaluation, the eval tasks, a sample and a periodic checkpoint, each when it is
// due; their time is left out of the step's. True when the evaluation reached eval.target_val_loss and the run
// stops there.
bool Run::periodic_work(Loop& l, int64_t step, bool report) {
  const auto io_start = Clock::now();
  const double trained_s = train_seconds();  // training time up to here, the evaluation's own time left out
  const bool last = step == c_.train.steps;
  const auto due = [&](int64_t every) { return every > 0 ? step % every == 0 || last : last; };
  bool target_stop = false;
  if (loader_->val_tokens() > 0 && due(c_.eval.every)) target_stop = evaluate_val(step, trained_s);
  if (!eval_tasks_.empty() && due(c_.eval.every)) evaluate_tasks(step);
  // "Sample now" (control->sample) takes the next step's end, so it costs one sample, not a reload.
  const bool asked = control_ && control_->sample.exchange(false);
  if (main_ && ((c_.sample.every >= 0 && due(c_.sample.every)) || asked)) sample(step);
  // Periodic checkpoints bound the work a crash or a kill can lose: by steps when asked, and by wall time (on by
  // default), which bounds it whatever a step costs on this model and device.
  const bool by_steps = c_.checkpoint.every > 0 && step % c_.checkpoint.every == 0;
  bool by_time = c_.checkpoint.minutes > 0 &&
                 Clock::now() - last_checkpoint_ >= std::chrono::duration<double>(60.0 * c_.checkpoint.minutes);
  // ZeRO-1's checkpoint is a collective: the ranks agree on the time at report steps (which sync anyway).
  if (sharded_) by_time = report && group_->any(by_time);
  if ((by_steps || by_time) && !last) checkpoint(step);
  const double io = std::chrono::duration<double>(Clock::now() - io_start).count();
  l.meter.exclude(io);
  io_seconds_ += io;
  return target_stop;
}

bool Run::evaluate_val(int64_t step, double trained_s) {
  // Heartbeats: a line first and then at most one a second, so whoever watches the journal for a stall sees
  // the run alive through a long evaluation (and a user sees how far it is).
  const int64_t batches = val_batches_ ? val_batches_ : c_.eval.batches;
  const std::string what = "evaluating the val loss at step " + std::to_string(step);
  sink_.on_progress({what, 0, static_cast<uint64_t>(batches)});
  Clock::time_point beat = Clock::now();
  double val = evaluate(
      *model_, [&](int64_t i) { return loader_->val_batch(i); }, batches, precision_, device_, [&](int64_t done) {
        if (done == batches || Clock::now() - beat < std::chrono::seconds(1)) return;
        beat = Clock::now();
        sink_.on_progress({what, static_cast<uint64_t>(done), static_cast<uint64_t>(batches)});
      });
  if (group_) val = group_->mean(val);  // each rank evaluated its own share of the val windows
  EvalEvent e{step, tokens_, std::chrono::duration<double>(Clock::now() - started_).count(), {}};
  e.metrics.add("val_loss", val);
  const bool stop = check_target(e, val, trained_s) && c_.eval.stop_at_target;
  sink_.on_eval(e);
  return stop;
}

// How the loop ends after STEP, or nullptr when it goes on. The target reached ends it "finished" (the run did what
// it was asked; every rank agrees, as val is shared); a halt or a stop "stopped".
const char* Run::stop_status(int64_t step, bool report, bool target_reached) {
  if (target_reached) return "finished";
  if (step == c_.train.steps) return nullptr;  // the loop's own end
  if (control_ && control_->halt_at_step > 0 && step >= control_->halt_at_step)
    return "stopped";  // every rank has the same halt step: no agreement needed
  if (group_ ? report && stop_agreed() : stop_agreed()) return "stopped";
  return nullptr;
}

// A failed run: skipped steps never reached the weights, so the last good step is the one before them, and its
// checkpoint carries that step and its token count.
void Run::checkpoint_last_good(Loop& l, int64_t step) {
  try {
    if (!l.check_every_step) skipped_in_a_row_ = static_cast<int64_t>(l.in_a_row.item<float>());
    const int64_t good = step - skipped_in_a_row_, tokens_then = tokens_;
    for (int64_t k = 1; k <= skipped_in_a_row_; ++k) tokens_ -= tokens_at_step(c_, step - k);
    // ZeRO-1 would need every rank alive and in step to gather the state: its last periodic checkpoint stands.
    if (good > start_step_ && !sharded_) checkpoint(good);
    tokens_ = tokens_then;
  } catch (const std::exception&) {}
}

}  // namespace detail

EndEvent train(const Config& config, EventSink& sink, TrainControl* control) {
  if (config.dist.gpus > 1)
    throw Error("dist.gpus=" + std::to_string(config.dist.gpus) + " needs one process per rank",
                "start it with `tokamak train --gpus " + std::to_string(config.dist.gpus) + "` (or torchrun / srun)");
  return train(config, sink, control, DistEnv{});
}

Precision run_precision(const Config& c, int processes) {
  bool cpu = false;
  try {
    cpu = parse_device_kind(c.device) == DeviceKind::kCpu;
  } catch (const Error&) {}  // validate_config names the device
  // On a CPU with bf16 instructions, `auto` takes bf16 only where its GEMM is measured faster than fp32's, at the
  // threads the run will use.
  if (c.speed.precision == Precision::kAuto && cpu && cpu_has_bf16_instructions()) {
    at::set_num_threads(c.threads > 0 ? static_cast<int>(c.threads) : std::max(1, cores_given() / std::max(1, processes)));
    if (!cpu_bf16_pays(at::get_num_threads())) cpu_peak_flops("fp32"), cpu_peak_flops("bf16");
  }
  return resolved_precision(c.speed.precision, c.device);
}

Config prepare_run(const Config& config, const DistEnv& dist) {
  Config c = config;
  c.dist.gpus = dist.world_size;
  // Resolved before validation: what `auto` becomes on this device must pass the same checks (sdpa backends).
  c.speed.precision = run_precision(c, dist.local_world_size);  // the run records what it trains with
  validate_config(c, cuda_device_count());
  if (const std::string bf16 = bf16_device_problem(c.speed.precision, parse_device(c.device)); !bf16.empty())
    throw Error("config: " + bf16, "set speed.precision=fp16 (with a loss scale: what auto picks there) or fp32");
  if (c.speed.fp8) {  // what the device can do, which the config alone cannot say
    const std::string fp8 = kernels::fp8_matmul_problem(parse_device(c.device));
    if (!fp8.empty()) throw Error("config: " + fp8, "speed.precision=bf16 alone is this device's fastest matmul");
  }
  c.speed.layers = resolved_layers(c, c.speed.precision);
  check_memory(c);  // before the model or any batch is allocated
  return c;
}

EndEvent train_prepared(const Config& prepared, EventSink& sink, TrainControl* control, const DistEnv& dist) {
  detail::Run run(prepared, sink, control, dist);
  return run.execute();
}

EndEvent train(const Config& config, EventSink& sink, TrainControl* control, const DistEnv& dist) {
  return train_prepared(prepare_run(config, dist), sink, control, dist);
}

}  // namespace tokamak
