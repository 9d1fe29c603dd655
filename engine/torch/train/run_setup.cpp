// A run's set-up (data, model, optimizer, resume), its checkpoints, samples, evaluation tasks, skips and the
// target check (see run.h); the loop itself is trainer.cpp.
#include "engine/torch/train/run.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

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
#include "engine/torch/device/cpu_peak.h"
#include "engine/base/perf/flops.h"
#include "engine/torch/metrics/memory_bandwidth.h"
#include "engine/torch/metrics/step_meter.h"
#include "engine/torch/metrics/step_profile.h"
#include "engine/torch/model/hf.h"
#include "engine/base/run/run_folder.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/util/cores.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/device/device.h"
#include "engine/torch/train/math_mode.h"
#include "engine/torch/optim/muon.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/torch_error.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::detail {

std::string non_finite_name(double v) { return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf"; }

// Data parallel on CUDA: rank r of a machine takes GPU local_rank (engine/torch/parallel/process_group.h).
c10::Device run_device(const Config& c, const DistEnv& dist) {
  const c10::Device d = parse_device(c.device);
  return d.is_cuda() && dist.distributed() ? rank_device(d, dist, cuda_device_count()) : d;
}

// "NVIDIA H200 ×8", or every rank's name when they differ.
std::string describe_ranks(const std::vector<std::string>& names) {
  bool same = true;
  for (const auto& n : names) same = same && n == names.front();
  if (same) return names.front() + (names.size() > 1 ? " ×" + std::to_string(names.size()) : "");
  std::string all;
  for (size_t r = 0; r < names.size(); ++r) all += (r ? ", " : "") + std::to_string(r) + ": " + names[r];
  return all;
}

// The run's parts, in the order they depend on each other: the process (threads, ranks), the data, the model, the
// optimizer, what a checkpoint or rank 0 brings, the run's name and folder, and the start event.
void Run::set_up() {
  set_up_process();
  const std::string dataset = build_data();
  build_model();
  const OptimizerParts parts = build_optimizer();
  resume_and_join(parts);
  name_run();
  announce_start(dataset);
}

void Run::set_up_process() {
  int64_t threads = c_.threads;
  if (dist_.distributed()) {
    c_.dist.gpus = dist_.world_size;
    // Processes on one machine share its cores instead of each taking all of them.
    if (threads == 0)
      threads = std::max<int64_t>(1, cores_given() / std::max(1, dist_.local_world_size));
    // Ranks sharing a GPU talk over Gloo (through host memory): NCCL refuses two ranks on one device.
    const bool shared = device_.is_cuda() && ranks_share_gpus(device_, dist_, cuda_device_count());
    group_ = std::make_unique<ProcessGroup>(dist_, device_, std::chrono::seconds(c_.dist.timeout_s),
                                            shared ? Backend::kGloo : Backend::kAuto);
  }
  const int cpu_threads = configure_cpu(threads);
  // Data-parallel ranks divide the cores among themselves already; a GPU run's threads only feed the GPU.
  if (device_.is_cpu() && !dist_.distributed() && main_ && CoreSharing::enabled())
    sharing_ = std::make_unique<CoreSharing>(cpu_threads, /*adapt=*/c_.threads == 0);
  apply_math_mode(precision_, c_.speed.sdpa_backend);
  at::manual_seed(static_cast<uint64_t>(c_.train.seed));
  accum_ = grad_accum_steps(c_);
}

// The training and validation data, tokenized (or read from the cache), the eval tasks, and the loader; returns the
// dataset's description for the start event.
std::string Run::build_data() {
  ProgressEvent progress{"tokenizing " + c_.data.path, 0, 0};
  PreparedDataset data = prepare_dataset(c_.data.path, [&](uint64_t done, uint64_t total) {
    progress.done = done, progress.total = total;
    sink_.on_progress(progress);
    return !(control_ && control_->stop.load());
  });
  if (!c_.data.val_path.empty()) {
    // Separate validation data: every token of it is validation (a val shard named alone is a "train" file).
    progress.what = "tokenizing " + c_.data.val_path;
    PreparedDataset val = prepare_dataset(c_.data.val_path, [&](uint64_t done, uint64_t total) {
      progress.done = done, progress.total = total;
      sink_.on_progress(progress);
      return !(control_ && control_->stop.load());
    });
    data.val_shards = val.train_shards;
    data.val_shards.insert(data.val_shards.end(), val.val_shards.begin(), val.val_shards.end());
    data.val_tokens = val.train_tokens + val.val_tokens;
    data.warnings.insert(data.warnings.end(), val.warnings.begin(), val.warnings.end());
    data.description += "; validation: " + val.description;
  }
  check_token_ids(data, c_.model.vocab_size);  // before any id can reach the embedding
  for (const auto& w : data.warnings) sink_.on_warning({w});
  for (const EvalTaskSpec& spec : parse_eval_tasks(c_.eval.tasks)) {
    EvalOptions eo;
    eo.jsonl_field = c_.data.jsonl_field;
    eo.progress = [&](const std::string& what, int64_t done, int64_t total) {
      sink_.on_progress({what, static_cast<uint64_t>(done), static_cast<uint64_t>(total)});
      return !(control_ && control_->stop.load());
    };
    eval_tasks_.push_back(prepare_eval_task(spec, eo));
    check_choices_fit(eval_tasks_.back().items, c_.model.context);  // not at the first evaluation
  }
  LoaderOptions lo;
  lo.batch_size = c_.train.batch_size;
  lo.context = train_context(c_);
  lo.val_fraction = c_.data.val_fraction;
  lo.val_tokens = static_cast<uint64_t>(c_.eval.val_tokens);
  if (c_.eval.val_tokens > 0) {
    // Every validation window once: the ranks take interleaved batches of B windows (Loader::val_batch).
    const int64_t per_batch = c_.train.batch_size * train_context(c_) * dist_.world_size;
    if (c_.eval.val_tokens % per_batch != 0)
      throw Error("eval.val_tokens (" + std::to_string(c_.eval.val_tokens) +
                      ") is not a multiple of batch_size × "
                      "context × ranks (" +
                      std::to_string(per_batch) + ")",
                  "change eval.val_tokens or train.batch_size");
    val_batches_ = c_.eval.val_tokens / per_batch;
  }
  lo.seed = static_cast<uint64_t>(c_.train.seed);
  lo.device = device_;
  lo.pin_memory = pin_memory_on(c_.speed.pin_memory, device_.is_cuda());
  lo.prefetch = c_.speed.prefetch;
  lo.rank = dist_.rank;
  lo.world_size = dist_.world_size;
  loader_ = std::make_unique<Loader>(data, lo);
  return data.description;
}

void Run::build_model() {
  model_ = GPT(GPTOptions::from_config(c_.model, c_.speed));
  if (precision_ == Precision::kBf16Pure) model_->to(at::kBFloat16);
  model_->to(device_);
  model_->train();
}

// AdamW, or Muon with AdamW; under ZeRO-1 the sharded AdamW is made once the reducer is (resume_and_join).
Run::OptimizerParts Run::build_optimizer() {
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (const auto& p : model_->named_parameters()) params.emplace_back(p.key(), p.value());
  AdamWOptions ao{c_.optimizer.beta1, c_.optimizer.beta2, c_.optimizer.eps, c_.optimizer.weight_decay,
                  c_.speed.fused_adamw};
  if (c_.optimizer.head_lr > 0) ao.head_lr_scale = c_.optimizer.head_lr / c_.optimizer.lr;
  if (c_.optimizer.embed_lr > 0) ao.embed_lr_scale = c_.optimizer.embed_lr / c_.optimizer.lr;
  const bool zero = group_ && c_.dist.zero == 1;  // ZeRO-1: the sharded AdamW is made with the reducer below
  if (!zero) {
    const OptimizerKind kind = require_implemented(optimizer_choices(), "optimizer.name", c_.optimizer.name);
    if (kind != OptimizerKind::kAdamW)
      optimizer_ = std::make_unique<Muon>(
          params, ao,
          MuonOptions{c_.optimizer.muon_momentum, c_.optimizer.muon_lr / c_.optimizer.lr, kNewtonSchulzSteps,
                      require_implemented(muon_ns_choices(), "optimizer.muon_ns", c_.optimizer.muon_ns),
                      kind == OptimizerKind::kNorMuon, c_.optimizer.normuon_beta2});
    else optimizer_ = std::make_unique<AdamW>(params, ao);
  }
  return {params, ao, zero};
}

// The run's identity, health watch and loss scale; a checkpoint's weights, optimizer state and counters when it
// resumes; and, data parallel, rank 0's weights and identity on every rank.
void Run::resume_and_join(const OptimizerParts& parts) {
  const auto& [params, ao, zero] = parts;
  uid_ = control_ && !control_->run_uid.empty() ? control_->run_uid : new_run_uid();
  spikes_ = std::make_unique<SpikeWatch>(c_.health);
  if (precision_ == Precision::kFp16)
    scaler_ = std::make_unique<LossScaler>(
        LossScaleOptions{c_.speed.loss_scale_init, c_.speed.loss_scale_growth, c_.speed.loss_scale_backoff,
                         c_.speed.loss_scale_interval},
        device_);
  if (!c_.model.init_from.empty() && c_.checkpoint.resume.empty()) load_hf_weights(*model_, c_.model.init_from);
  std::unique_ptr<OptimizerState> resumed;  // ZeRO-1: the checkpoint's full-size state, of which a rank keeps 1/N
  if (!c_.checkpoint.resume.empty()) {
    if (zero) resumed = full_adamw_state(params);
    // The CLI names the run before it starts (a queue's or Slurm's trial by its row): another run's checkpoint
    // would continue that run's weights under this one's name.
    if (control_ && !control_->run_uid.empty()) check_checkpoint_owner(c_.checkpoint.resume, control_->run_uid);
    OptimizerState* into = zero ? resumed.get() : optimizer_.get();
    CheckpointInfo info = load_checkpoint(c_.checkpoint.resume, *model_, into, /*restore_rng=*/true, device_);
    uid_ = info.run_uid, start_step_ = info.step, tokens_ = info.tokens;
    train_seconds_before_ = info.train_seconds, target_step_ = info.target_step;
    if (!info.health.empty()) spikes_->load_state_json(info.health);
    if (scaler_ && !info.loss_scale.empty()) scaler_->load_state_json(info.loss_scale);
  }
  if (group_) {
    // Every rank starts from rank 0's weights (and its run uid), whatever its own initialisation did.
    // Buffers (the causal mask) follow from the config alone.
    std::vector<at::Tensor> weights = model_->parameters();
    {
      at::NoGradGuard no_grad;
      group_->broadcast(weights, 0);
    }
    uid_ = group_->all_gather_strings(uid_).front();
    reducer_ = std::make_unique<GradReducer>(model_->parameters(), *group_,
                                             static_cast<int64_t>(c_.dist.bucket_mb * 1024 * 1024),
                                             zero ? ReduceMode::kReduceScatter : ReduceMode::kAllReduce);
    if (zero) {
      sharded_ = std::make_unique<ShardedAdamW>(params, *reducer_, *group_, ao);
      if (resumed) sharded_->load_state(*resumed);
    }
    // Dropout masks must differ between ranks; rank 0 keeps the stream a single process would have.
    if (dist_.rank > 0)
      at::manual_seed(static_cast<uint64_t>(c_.train.seed) * 1000003u + dist_.rank * 7919u + start_step_);
  }
}

void Run::name_run() {
  if (c_.name.empty()) c_.name = default_run_name(c_);
  // By default checkpoints go to the run folder (engine/base/run/run_folder.h), beside the run's journal.
  checkpoint_dir_ = !c_.checkpoint.dir.empty() ? c_.checkpoint.dir : run_folder_path(c_.name, uid_);
  // A full disk or a read-only folder is found now, not after hours of training.
  if (main_ && writes_checkpoints())
    prepare_checkpoint_dir(checkpoint_dir_, 2 * checkpoint_bytes(*model_, /*with_optimizer=*/true), uid_,
                           /*only_checkpoints=*/!c_.checkpoint.dir.empty());
}

// The start event (what, where, the two limits), then the machine's and the pace's watches.
void Run::announce_start(const std::string& dataset) {
  RunStart start;
  start.run_uid = uid_;
  start.name = c_.name;
  start.config_json = config_to_json(c_, -1);
  start.dataset = dataset;
  start.model = c_.model.preset;
  start.n_params = model_->num_parameters();
  start.device = device_.str();
  start.gpu_name = device_.is_cuda() ? device_name(device_) : "";
  start.host = host_name();
  start.world_size = dist_.world_size;
  if (group_) {
    start.gpu_name = device_.is_cuda() ? describe_ranks(group_->all_gather_strings(start.gpu_name)) : "";
    start.host = describe_ranks(group_->all_gather_strings(start.host));
  }
  start.tokamak_version = TOKAMAK_VERSION;
  start.torch_version = TORCH_VERSION;
  start.cuda_version = cuda_runtime_version();
  start.start_step = start_step_;
  start.total_steps = c_.train.steps;
  start.tokens_per_step = tokens_per_step(c_);
  // MFU's denominator: the datasheet for a GPU, this machine's own measured GEMM rate for a CPU (no datasheet
  // says what a CPU of that name reaches with these cores and LibTorch's kernels).
  if (device_.is_cuda()) {
    // speed.fp8 keeps MFU against the bf16 peak (its precision is bf16): fp8's peak is twice it on Hopper, but the
    // head, attention and the rest stay bf16, and one scale lets runs with and without fp8 be compared.
    peak_ = peak_flops(device_name(device_), name_of(c_.speed.precision));
    start.peak_source = peak_ > 0 ? "datasheet (" + start.gpu_name + ", " + name_of(c_.speed.precision) + ")" : "";
  } else if (main_) {  // only rank 0 reports MFU; ranks measuring at once would share the cores
    const CpuPeak cpu = cpu_peak_flops(name_of(c_.speed.precision));
    peak_ = cpu.flops;
    start.peak_source = cpu.source;
  }
  start.peak_flops = peak_;
  // The second limit, stated beside the first; from the cache after this machine's first run (no half second of
  // copies at every start). Only rank 0 reports it: ranks measuring at once would share the memory bus.
  if (main_) {
    const MemoryBandwidth bandwidth = start_memory_bandwidth(device_);
    start.memory_bytes_per_s = bandwidth.dram(), start.memory_source = bandwidth.source;
  }
  sink_.on_start(start);
  if (main_) {
    machine_ = std::make_unique<MachineHealth>(pci_bus_id(device_));
    if (!machine_->gpu_note().empty()) sink_.on_warning({machine_->gpu_note()});
    slowdown_ = std::make_unique<SlowdownWatch>(c_.health.slowdown_fraction, c_.health.slowdown_reports);
  }
}

void Run::checkpoint(int64_t step) {
  if (!writes_checkpoints()) return;  // every rank has the same control: none waits in a gather
  // ZeRO-1: every rank takes part in gathering the state into rank 0, which writes the ordinary file.
  std::unique_ptr<OptimizerState> gathered = sharded_ ? sharded_->gather_state() : nullptr;
  if (!main_) return;  // ranks hold the same weights: one writer
  sink_.on_progress({"writing the checkpoint of step " + std::to_string(step), 0, 0});  // a heartbeat: see evaluate's
  std::string path = checkpoint_path(checkpoint_dir_, step);
  OptimizerState* state = sharded_ ? gathered.get() : optimizer_.get();
  CheckpointInfo info;
  info.run_uid = uid_, info.config_json = config_to_json(c_, -1), info.step = step, info.tokens = tokens_;
  info.train_seconds = train_seconds(), info.target_step = target_step_;
  info.health = spikes_->state_json();
  if (scaler_) info.loss_scale = scaler_->state_json();
  save_checkpoint(path, *model_, state, info, device_);
  last_checkpoint_ = Clock::now();
  prune_checkpoints(checkpoint_dir_, c_.checkpoint.keep, uid_);
  sink_.on_checkpoint({step, path});
}

void Run::sample(int64_t step) {
  // Under the run's autocast, so a forced flash or cuDNN backend gets the bf16 inputs it needs; and with the math
  // backend allowed, for the KV cache's shapes (one-token queries, a mask) that those backends refuse.
  MathModeGuard modes;
  at::globalContext().setSDPUseMath(true);
  AutocastGuard autocast(device_.type(), uses_autocast(precision_), autocast_dtype(precision_));
  SampleOptions so;
  so.max_new_tokens = c_.sample.tokens;
  so.temperature = c_.sample.temperature;
  so.top_k = c_.sample.top_k;
  so.seed = static_cast<uint64_t>(c_.train.seed + step);
  so.stop_at_end_of_text = false;  // a sample shows what the model writes, document breaks included
  sink_.on_sample({step, c_.sample.prompt, sample_text(*model_, c_.sample.prompt, so, device_)});
}

// eval.tasks on the model as it is, as metrics of the run ("eval/hellaswag/acc", ...). Every rank
// evaluates (the same weights, the same numbers): a rank that waited for rank 0 at its next collective could
// pass dist.timeout_s on a long task. Only rank 0's sink reports.
void Run::evaluate_tasks(int64_t step) {
  EvalOptions eo;
  eo.device = device_, eo.precision = precision_;
  eo.progress = [&](const std::string& what, int64_t done, int64_t total) {
    sink_.on_progress({what, static_cast<uint64_t>(done), static_cast<uint64_t>(total)});
    return true;  // a stop takes effect after the evaluation, at the step's end
  };
  EvalEvent e{step, tokens_, 0, {}};
  for (const PreparedEvalTask& task : eval_tasks_)
    for (const MetricValue& v : as_run_metrics(task.spec, run_eval_task(*model_, task, eo))) e.metrics.add(v);
  e.wall_s = std::chrono::duration<double>(Clock::now() - started_).count();
  sink_.on_eval(e);
}

bool Run::wait_while_paused() {
  while (control_ && control_->pause.load() && !control_->stop.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return !(control_ && control_->stop.load());
}

// Data parallel: every rank must leave the loop after the same step, so a stop on any rank (Ctrl-C, the
// launcher) takes effect once all have agreed, at a report step.
bool Run::stop_agreed() {
  const bool mine = control_ && control_->stop.load();
  return group_ ? group_->any(mine) : mine;
}

// A step with a non-finite loss or gradients left the weights alone; too many in a row end the run.
void Run::count_skipped(int64_t step, int64_t in_a_row, int64_t total, const std::string& reason) {
  if (total > skipped_) sink_.on_skip({step, reason, in_a_row, total});
  skipped_ = total, skipped_in_a_row_ = in_a_row;
  if (in_a_row > c_.train.max_skipped_steps)
    throw Error(std::to_string(in_a_row) + " steps in a row up to step " + std::to_string(step) + " were skipped (" +
                    reason + "); the weights are those of step " + std::to_string(step - in_a_row),
                "lower optimizer.lr, use speed.precision=fp32, or raise train.max_skipped_steps");
}

int64_t Run::roll_back(int64_t step, const SpikeVerdict& v) {
  std::string path;
  int64_t to = -1;
  if (writes_checkpoints())
    for (const std::string& p : list_checkpoints(checkpoint_dir_)) {
      const CheckpointInfo i = read_checkpoint_info(p);
      if (i.run_uid == uid_ && i.step < step && i.step > to) path = p, to = i.step;
    }
  if (path.empty()) return -1;
  const int64_t tokens_then = tokens_;
  const CheckpointInfo info = load_checkpoint(path, *model_, optimizer_.get(), /*restore_rng=*/true, device_);
  tokens_ = info.tokens;
  spikes_->rolled_back(step, info.step, info.health);
  if (scaler_ && !info.loss_scale.empty()) scaler_->load_state_json(info.loss_scale);
  SpikeEvent e = spikes_->event(step, tokens_then, seconds_since_start(), v, "rolled back");
  e.to_step = info.step, e.data_skipped = step - info.step;
  sink_.on_spike(e);
  return info.step;
}

// Data parallel, profiled report steps: how much of the gradient collectives ran while backward still did.
void Run::add_overlap_metrics(Metrics& metrics) const {
  if (!reducer_) return;
  const Overlap o = overlap_of(reducer_->timings());
  if (!o.measured) return;
  metrics.add("allreduce_hidden", o.hidden);
  metrics.add("allreduce_first_start_ms", o.first_start_ms);
  metrics.add("allreduce_last_end_ms", o.last_end_ms);
}

// The first evaluation at or below eval.target_val_loss adds the training time, tokens and steps it took to
// its event (the store, exports and `runs compare` read them as metrics). Its resolution is eval.every.
bool Run::check_target(EvalEvent& e, double val, double trained_s) {
  if (c_.eval.target_val_loss <= 0 || target_step_ > 0 || !(val <= c_.eval.target_val_loss)) return false;
  target_step_ = e.step;
  e.metrics.add("time_to_target_s", trained_s);
  e.metrics.add_count("tokens_to_target", e.tokens);
  e.metrics.add_count("steps_to_target", e.step);
  return true;
}

void Run::share_cores() {
  int threads = 0;
  std::string line;
  if (!sharing_ || !sharing_->poll(&threads, &line)) return;
  if (threads > 0) at::set_num_threads(threads);
  sink_.on_warning({line});
}

}  // namespace tokamak::detail
