// The training loop (see trainer.h; the run's set-up, checkpoints and samples are run_setup.cpp). It reads top to
// bottom: one iteration per optimizer step:
// schedule → forward/backward over the micro-batches → clip → AdamW → (every log_every steps) the only host
// sync, metrics, evaluation, samples and checkpoints. Data parallel (engine/parallel) adds four things: the
// gradient reducer inside forward/backward, the loss averaged over ranks, and at report steps the agreed
// stop; only rank 0 reports, samples and checkpoints. With dist.zero=1 (ZeRO-1) the clip and AdamW are the
// sharded ones of engine/parallel/zero.h and a checkpoint first gathers the state from every rank.
#include "engine/train/trainer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "engine/train/loader.h"
#include "engine/core/data/tokenizer.h"
#include "engine/parallel/dist_env.h"
#include "engine/parallel/reducer.h"
#include "engine/parallel/zero.h"
#include "engine/eval/eval_task.h"
#include "engine/eval/scoring.h"
#include "engine/generate/generate.h"
#include "engine/model/gpt.h"
#include "engine/model/autocast.h"
#include "engine/model/memory_estimate.h"
#include "engine/core/util/cores.h"
#include "engine/device/cpu_peak.h"
#include "engine/metrics/flops.h"
#include "engine/metrics/step_meter.h"
#include "engine/metrics/step_profile.h"
#include "engine/model/hf.h"
#include "engine/core/run/run_folder.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/device/cpu_setup.h"
#include "engine/device/device.h"
#include "engine/kernels/fp8_linear.h"
#include "engine/train/math_mode.h"
#include "engine/train/cuda_graph_step.h"
#include "engine/optim/muon.h"
#include "engine/optim/optimizer.h"
#include "engine/train/step.h"
#include "engine/train/health.h"
#include "engine/train/run.h"
#include "engine/train/torch_error.h"
#include "engine/core/util/error.h"
#include "engine/core/util/files.h"

namespace tokamak {
namespace detail {

EndEvent Run::execute() {
  EndEvent end;
  started_ = last_checkpoint_ = Clock::now();
  set_up();
  const int64_t steps = c_.train.steps;
  int64_t window_tokens = 0;  // trained since the last report (warm-ups make steps of different sizes)
  const double fpt =
      flops_per_token(model_->num_flop_parameters(), c_.model.n_layer, c_.model.n_embd, train_context(c_));
  const double peak = peak_;
  // health.spike_action=skip or rollback decides before each update, so it reads the loss every step as well.
  const bool check_every_step = !(device_.is_cuda() && c_.speed.fused_adamw) || spikes_->decides_each_step();
  const SpikeAction spike_action = spikes_->action();
  // Without a host read per step, warn looks at each step's loss and norm at the next report.
  std::vector<std::pair<int64_t, at::Tensor>> unread;
  std::vector<at::Tensor> params = model_->parameters();
  const auto optimizer_step = [&](double lr, const at::Tensor& found_inf) {
    if (sharded_) sharded_->step(lr, found_inf);
    else optimizer_->step(lr, found_inf);
  };
  StepMeter meter;
  const auto reports = [&](int64_t s) { return s % c_.train.log_every == 0 || s == steps || s == start_step_ + 1; };
  // Every step of a report window is profiled, the same steps the meter times: the phases beside step_ms are
  // the mean of those steps and add up to it (the rest between steps is other). No mark syncs the host.
  StepProfile profile(device_);
  // speed.cuda_graphs: the step captured once and replayed (engine/train/cuda_graph_step.h). Inside a graph its
  // phases cannot be timed apart: the step is timed whole, with no step profile.
  std::unique_ptr<CudaGraphStep> graphed;
  if (c_.speed.cuda_graphs) graphed = std::make_unique<CudaGraphStep>(device_);
  const bool profiling = c_.train.profile && !graphed;
  const auto lap = [&](Phase p) {
    if (profiling) profile.lap(p);
  };
  // Without a host sync per step, skipped steps are counted on the device and read at report steps.
  const auto counter = at::TensorOptions().device(device_).dtype(at::kFloat);
  at::Tensor skipped_dev = at::zeros({}, counter), in_a_row_dev = at::zeros({}, counter);
  at::Tensor scale_skipped_dev = at::zeros({}, counter);  // fp16: steps the loss scale skipped
  int64_t step = start_step_;
  end.status = "finished";
  bool target_stop = false;  // eval.stop_at_target, once the target is reached
  loop_started_ = Clock::now();

  try {
    while (step < steps) {
      if (!group_ && !wait_while_paused()) {
        end.status = "stopped";
        break;
      }
      share_cores();
      if (profiling) profile.begin();
      const double lr = learning_rate(c_, step) * spikes_->lr_scale(step);
      if (reducer_) reducer_->zero_grad();
      else if (!graphed || !graphed->captured()) optimizer_->zero_grad();  // a graph refills its gradients in place
      // train.batch_warmup / train.seq_warmup: the first rows and tokens of the step's own batches, so the data
      // position (and a resume) does not depend on them.
      const int64_t rows = batch_rows_at(c_, step), len = seq_len_at(c_, step);
      const auto next_batch = [&](int64_t micro) {
        Batch b = loader_->train_batch(spikes_->data_step(step), micro, accum_);
        if (control_ && control_->batch_hook) control_->batch_hook(step + 1, spikes_->data_step(step), b.inputs, b.targets);
        if (rows < b.inputs.size(0) || len < b.inputs.size(1)) {
          b.inputs = b.inputs.narrow(0, 0, rows).narrow(1, 0, len);
          b.targets = b.targets.narrow(0, 0, rows).narrow(1, 0, len);
        }
        return b;
      };
      StepOutput out;
      at::Tensor norm;
      std::string skip_reason;
      SpikeVerdict spike;
      if (graphed) {
        const Batch batch = next_batch(0);
        const GraphStepResult r = graphed->step(
            batch.inputs, batch.targets, lr,
            [&](const at::Tensor& inputs, const at::Tensor& targets, const at::Tensor& device_lr) {
              const StepOutput o = forward_backward(
                  *model_,
                  [&](int64_t) {
                    return Batch{inputs, targets};
                  },
                  1, precision_, device_, {}, nullptr, nullptr);
              RECORD_FUNCTION("tokamak::optimizer", std::vector<c10::IValue>());
              at::Tensor n = clip_grad_norm(params, c_.optimizer.grad_clip);
              at::Tensor bad = at::logical_or(~at::isfinite(o.loss), ~at::isfinite(n)).to(at::kFloat);
              optimizer_->step_device_lr(device_lr, bad);
              skipped_dev.add_(bad);
              in_a_row_dev.add_(bad).mul_(bad);
              return GraphStepResult{o.loss, n, true};
            },
            [&] { optimizer_->zero_grad(); });
        // A replay runs no host code: the host's count of AdamW's steps (checkpoints keep it) moves here.
        if (!r.body_ran) optimizer_->set_steps_taken(optimizer_->steps_taken() + 1);
        out.loss = r.loss, norm = r.norm;
      } else {
        out = forward_backward(*model_, next_batch, accum_, precision_, device_,
                               scaler_ ? scaler_->scale().reshape({}) : at::Tensor(), reducer_.get(),
                               profiling ? &profile : nullptr);
        if (group_) {
          // The global mean loss: all ranks then agree on a non-finite loss and skip or stop together.
          group_->all_reduce_sum(out.loss).wait();
          out.loss.div_(static_cast<double>(dist_.world_size));
          lap(Phase::kAllreduce);
        }
        if (control_ && control_->gradient_hook) control_->gradient_hook(step + 1, params);
        lap(Phase::kOther);
        // Clip, the skip decision and the update, in a profiler scope of their own (`bench --kernels`: optimizer).
        RECORD_FUNCTION("tokamak::optimizer", std::vector<c10::IValue>());
        // fp16: the gradients unscaled before the clip sees them. An overflow is the loss scale's to handle (the
        // step skipped, the scale lowered), not a fault of the run: it is counted apart and never a spike. Under
        // data parallel every rank holds the same all-reduced gradients, so every rank finds the same overflow;
        // under ZeRO-1 each rank checks its own slices, and the ranks' found_inf is all-reduced.
        at::Tensor overflow;
        if (scaler_) overflow = (sharded_ ? sharded_->unscale(scaler_->inv_scale()) : scaler_->unscale(params)).reshape({});
        norm = sharded_ ? sharded_->clip_grad_norm(c_.optimizer.grad_clip)  // the global norm of the shards
                        : clip_grad_norm(params, c_.optimizer.grad_clip);
        // One NaN or inf in any gradient makes the norm non-finite: with the loss, that decides the skip.
        at::Tensor bad = at::logical_or(~at::isfinite(out.loss), ~at::isfinite(norm)).to(at::kFloat);
        if (check_every_step) {
          if (overflow.defined() && overflow.item<float>() != 0) {
            ++scale_skipped_;
          } else if (bad.item<float>() == 0) {
            skipped_in_a_row_ = 0;
            if (spike_action != SpikeAction::kOff) spike = spikes_->look(out.loss.item<double>(), norm.item<double>());
            if (!spike.spike || spike_action == SpikeAction::kWarn) optimizer_step(lr, {});
          } else {
            const double loss = out.loss.item<double>();
            skip_reason = std::isfinite(loss) ? "gradients are " + non_finite_name(norm.item<double>())
                                              : "loss is " + non_finite_name(loss);
          }
        } else if (overflow.defined()) {
          const at::Tensor fault = bad * (1 - overflow);  // non-finite without an overflow of the scaled gradients
          optimizer_step(lr, at::maximum(bad, overflow));
          skipped_dev.add_(fault);
          in_a_row_dev.add_(fault).mul_(fault);
          scale_skipped_dev.add_(overflow);
        } else {
          optimizer_step(lr, bad);
          skipped_dev.add_(bad);
          in_a_row_dev.add_(bad).mul_(bad);
        }
        if (scaler_) scaler_->update(overflow.reshape({1}));
        lap(Phase::kOptimizer);  // clip, the skip decision and AdamW
      }
      if (spike_action == SpikeAction::kWarn && !check_every_step)
        unread.emplace_back(step + 1, at::stack({out.loss.detach().to(at::kFloat).reshape({}),
                                                 norm.detach().to(at::kFloat).reshape({})}));
      ++step;
      meter.step();
      tokens_ += tokens_at_step(c_, step - 1);
      window_tokens += tokens_at_step(c_, step - 1);
      if (!skip_reason.empty()) count_skipped(step, skipped_in_a_row_ + 1, skipped_ + 1, skip_reason);
      if (spike.spike) {
        const int64_t back_to = spike_action == SpikeAction::kRollback ? roll_back(step, spike) : -1;
        if (back_to >= 0) {  // the steps after the checkpoint are undone: nothing of them is reported
          step = back_to;
          continue;
        }
        sink_.on_spike(spikes_->event(step, tokens_, seconds_since_start(), spike,
                                      spike_action == SpikeAction::kWarn ? "warned" : "skipped"));
      }

      const bool last = step == steps;
      const bool report = reports(step);
      if (report) {
        if (!check_every_step)  // the host sync of this report
          count_skipped(step, static_cast<int64_t>(in_a_row_dev.item<float>()),
                        static_cast<int64_t>(skipped_dev.item<float>()), "non-finite loss or gradients");
        for (const auto& [at_step, values] : unread) {  // warn on a GPU: the steps since the last report
          const at::Tensor v = values.to(at::kCPU);
          const SpikeVerdict late = spikes_->look(v[0].item<double>(), v[1].item<double>());
          if (late.spike) sink_.on_spike(spikes_->event(at_step, tokens_, seconds_since_start(), late, "warned"));
        }
        unread.clear();
        lap(Phase::kOther);
        synchronize(device_);
        const StepMeter::Window window = meter.close();
        // Every metric of a step is named here, once; sinks pass them on without knowing them.
        StepEvent e;
        e.step = step, e.tokens = tokens_;
        e.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
        const double tok_s = static_cast<double>(window_tokens) / window.seconds;
        window_tokens = 0;
        e.metrics.add("loss", out.loss.item<double>());  // left out when this step was skipped (not finite)
        e.metrics.add("lr", lr);
        e.metrics.add("grad_norm", norm.item<double>());
        e.metrics.add("step_ms", 1000.0 * window.seconds / static_cast<double>(window.steps));
        e.metrics.add("tok_s", tok_s);
        const double mfu = peak > 0 ? tok_s * fpt / (peak * c_.dist.gpus) : -1;  // tok_s is every rank's: per GPU
        if (mfu >= 0) e.metrics.add("mfu", mfu);
        const MemoryUse mem = memory_use(device_);
        e.metrics.add_count("mem_allocated", mem.allocated);
        e.metrics.add_count("mem_reserved", mem.reserved);
        e.metrics.add_count("mem_peak", mem.peak);
        if (!device_.is_cuda()) trim_cpu_allocator(mem.reserved);  // bounds what the allocator keeps
        e.metrics.add_count("skipped_steps", skipped_);
        if (scaler_) {
          if (!check_every_step) scale_skipped_ = static_cast<int64_t>(scale_skipped_dev.item<float>());
          const double scale = scaler_->scale_value();
          e.metrics.add("loss_scale", scale);
          e.metrics.add_count("scale_skipped_steps", scale_skipped_);
          // Halved at every overflow, 2^-24 is 40 overflows in a row from the default: no scale makes the
          // gradients finite, so the model itself has diverged.
          if (scale < 0x1p-24)
            throw Error("the fp16 loss scale fell to " + std::to_string(scale) + " by step " + std::to_string(step) +
                            ": the gradients are not finite at any scale (the model diverged)",
                        "lower optimizer.lr, or use speed.precision=bf16 or fp32");
        }
        if (spike_action != SpikeAction::kOff) e.metrics.add_count("spikes", spikes_->total());
        if (sharded_)
          e.metrics.add_count("zero_saved_bytes", sharded_->unsharded_state_bytes() - sharded_->state_bytes());
        add_overlap_metrics(e.metrics);
        if (profiling) profile.add_to(e.metrics, group_ != nullptr, 1000.0 * window.seconds / window.steps);
        if (machine_) {  // the readings are no part of a step: left out of the next window's time
          const auto read_start = Clock::now();
          machine_->add_to(e.metrics);
          meter.exclude(std::chrono::duration<double>(Clock::now() - read_start).count());
        }
        // Time left at the pace so far, evaluations, samples and checkpoints included (they are in the wall time).
        const double looped = std::chrono::duration<double>(Clock::now() - loop_started_).count();
        if (step > start_step_) e.metrics.add("eta_s", looped / static_cast<double>(step - start_step_) * (steps - step));
        if (control_ && control_->first_report && !first_reported_)
          for (const MetricValue& v : control_->first_report()) e.metrics.add(v);
        first_reported_ = true;
        sink_.on_step(e);
        if (slowdown_)
          if (const auto message = slowdown_->report(e.metrics)) sink_.on_alert({"slowdown", step, *message});
        if (profiling) profile.reset();  // the next window starts
      }
      const auto io_start = Clock::now();
      const double trained_s = train_seconds();  // training time up to here, the evaluation's own time left out
      const auto due = [&](int64_t every) { return every > 0 ? step % every == 0 || last : last; };
      if (loader_->val_tokens() > 0 && due(c_.eval.every)) {
        // A heartbeat first: whoever watches the journal for a stall sees the run alive through a long evaluation.
        sink_.on_progress({"evaluating the val loss at step " + std::to_string(step), 0, 0});
        double val = evaluate(
            *model_, [&](int64_t i) { return loader_->val_batch(i); }, val_batches_ ? val_batches_ : c_.eval.batches,
            precision_, device_);
        if (group_) val = group_->mean(val);  // each rank evaluated its own share of the val windows
        EvalEvent e{step, tokens_, std::chrono::duration<double>(Clock::now() - started_).count(), {}};
        e.metrics.add("val_loss", val);
        target_stop = check_target(e, val, trained_s) && c_.eval.stop_at_target;
        sink_.on_eval(e);
      }
      if (!eval_tasks_.empty() && due(c_.eval.every)) evaluate_tasks(step);
      // "Sample now" (control->sample) takes the next step's end, so it costs one sample, not a reload.
      const bool asked = control_ && control_->sample.exchange(false);
      if (main_ && ((c_.sample.every >= 0 && due(c_.sample.every)) || asked)) sample(step);
      // Periodic checkpoints bound the work a crash or a kill can lose: by steps when asked, and by wall time
      // (on by default), which bounds it whatever a step costs on this model and device.
      const bool by_steps = c_.checkpoint.every > 0 && step % c_.checkpoint.every == 0;
      bool by_time = c_.checkpoint.minutes > 0 &&
                     Clock::now() - last_checkpoint_ >= std::chrono::duration<double>(60.0 * c_.checkpoint.minutes);
      // ZeRO-1's checkpoint is a collective: the ranks agree on the time at report steps (which sync anyway).
      if (sharded_) by_time = report && group_->any(by_time);
      if ((by_steps || by_time) && !last) checkpoint(step);
      const double io = std::chrono::duration<double>(Clock::now() - io_start).count();
      meter.exclude(io);
      io_seconds_ += io;
      if (target_stop)
        break;  // status stays "finished": the run did what it was asked (every rank agrees: val is shared)
      if (!last && control_ && control_->halt_at_step > 0 && step >= control_->halt_at_step) {
        end.status = "stopped";  // every rank has the same halt step: no agreement needed
        break;
      }
      if (!last && (group_ ? report && stop_agreed() : stop_agreed())) {
        end.status = "stopped";
        break;
      }
    }
    if (step > start_step_ || end.status == "finished") checkpoint(step);
  } catch (const std::exception& e) {
    end.status = "failed";
    end.error = torch_error_text(e);  // one line, never LibTorch's backtrace
    // Skipped steps never reached the weights: the last good step is the one before them, and its
    // checkpoint carries that step and its token count.
    try {
      if (!check_every_step) skipped_in_a_row_ = static_cast<int64_t>(in_a_row_dev.item<float>());
      const int64_t good = step - skipped_in_a_row_, tokens_then = tokens_;
      for (int64_t k = 1; k <= skipped_in_a_row_; ++k) tokens_ -= tokens_at_step(c_, step - k);
      // ZeRO-1 would need every rank alive and in step to gather the state: its last periodic checkpoint stands.
      if (good > start_step_ && !sharded_) checkpoint(good);
      tokens_ = tokens_then;
    } catch (const std::exception&) {}
  }
  end.step = step;
  end.tokens = tokens_;
  end.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  if (!main_ && end.status == "failed") end.error = "rank " + std::to_string(dist_.rank) + ": " + end.error;
  end_sink_.on_end(end);
  return end;
}

}  // namespace detail

EndEvent train(const Config& config, EventSink& sink, TrainControl* control) {
  if (config.dist.gpus > 1)
    throw Error("dist.gpus=" + std::to_string(config.dist.gpus) + " needs one process per rank",
                "start it with `tokamak train --gpus " + std::to_string(config.dist.gpus) + "` (or torchrun / srun)");
  return train(config, sink, control, DistEnv{});
}

std::string run_precision(const Config& c, int processes) {
  // On a CPU with bf16 instructions, `auto` takes bf16 only where its GEMM is measured faster than fp32's, at the
  // threads the run will use.
  if (c.speed.precision == "auto" && parse_device(c.device).is_cpu() && cpu_has_bf16_instructions()) {
    at::set_num_threads(c.threads > 0 ? static_cast<int>(c.threads) : std::max(1, cores_given() / std::max(1, processes)));
    if (!cpu_bf16_pays(at::get_num_threads())) cpu_peak_flops("fp32"), cpu_peak_flops("bf16");
  }
  return resolved_precision(c.speed.precision, c.device);
}

EndEvent train(const Config& config, EventSink& sink, TrainControl* control, const DistEnv& dist) {
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
  detail::Run run(c, sink, control, dist);
  return run.execute();
}

}  // namespace tokamak
