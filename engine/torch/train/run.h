// One training run's state and its parts, shared by the loop (trainer.cpp) and its set-up, checkpoints, samples
// and reports (run_setup.cpp). Internal to engine/torch/train: train() in trainer.h is the way in.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/util/core_sharing.h"
#include "engine/torch/eval/eval_task.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/parallel/dist_env.h"
#include "engine/torch/parallel/reducer.h"
#include "engine/torch/parallel/zero.h"
#include "engine/base/run/pace_watch.h"
#include "engine/base/run/machine_health.h"
#include "engine/torch/train/health.h"
#include "engine/torch/train/loader.h"
#include "engine/torch/train/loss_scaler.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/trainer.h"

namespace tokamak::detail {

using Clock = std::chrono::steady_clock;

// "nan", "inf" or "-inf": how a non-finite loss or norm is named in a skip's reason.
std::string non_finite_name(double v);
// Data parallel on CUDA: rank r of a machine takes GPU local_rank (engine/torch/parallel/process_group.h).
c10::Device run_device(const Config& c, const DistEnv& dist);

class SilentSink : public EventSink {};

// What one optimizer step gave the loop: its loss and gradient norm (device tensors), its learning rate, and, where
// every step reads the host, why it was skipped ("" if it was not) and whether it was a spike.
struct StepResult {
  StepOutput out;
  at::Tensor norm;
  double lr = 0;
  std::string skip_reason;
  SpikeVerdict spike;
  at::Tensor jump;  // with a spike watch: each parameter group's gradient RMS over its running mean (LayerStats)
};
struct Loop;  // what the loop keeps from step to step (trainer.cpp)

class Run {
 public:
  Run(const Config& config, EventSink& sink, TrainControl* control, const DistEnv& dist)
      : c_(config), dist_(dist), sink_(dist.rank == 0 ? sink : silent_), end_sink_(sink), control_(control),
        device_(run_device(config, dist)), precision_(require_implemented(precision_choices(), "speed.precision", config.speed.precision)), main_(dist.rank == 0) {}

  EndEvent execute();

 private:
  // The loop's parts (trainer.cpp), in the order of a step.
  StepResult train_step(Loop& l, int64_t step);
  void graphed_step(Loop& l, int64_t step, StepResult& r);
  void eager_step(Loop& l, int64_t step, StepResult& r);
  Batch batch_for(int64_t step, int64_t micro);
  void report_step(Loop& l, int64_t step, const StepResult& r);
  bool reports_at(int64_t step) const;  // STEP counted from 1: a report follows it
  bool layers_at(int64_t step) const;   // and the per-layer statistics with it (metrics.layers_every)
  void add_loss_scale_metrics(Loop& l, int64_t step, Metrics& metrics);
  bool periodic_work(Loop& l, int64_t step, bool report);
  bool evaluate_val(int64_t step, double trained_s);
  const char* stop_status(int64_t step, bool report, bool target_reached);
  void checkpoint_last_good(Loop& l, int64_t step);

  void set_up();
  struct OptimizerParts {
    std::vector<std::pair<std::string, at::Tensor>> params;  // named, as the optimizers take them
    AdamWOptions adamw;
    bool zero = false;  // ZeRO-1 with several ranks: the sharded AdamW instead of optimizer_
  };
  void set_up_process();
  std::string build_data();
  void build_model();
  OptimizerParts build_optimizer();
  void resume_and_join(const OptimizerParts& parts);
  void name_run();
  void announce_start(const std::string& dataset);
  void checkpoint(int64_t step);
  bool writes_checkpoints() const { return !control_ || control_->checkpoints; }
  void sample(int64_t step);
  void evaluate_tasks(int64_t step);
  bool wait_while_paused();
  bool stop_agreed();
  void count_skipped(int64_t step, int64_t in_a_row, int64_t total, const std::string& reason);
  // health.spike_action=rollback at a spike of STEP: loads the run's newest checkpoint before it and returns its
  // step, the data moved past the steps in between; -1 when there is none (the spike is then skipped).
  int64_t roll_back(int64_t step, const SpikeVerdict& v);
  void add_overlap_metrics(Metrics& metrics) const;

  Config c_;
  DistEnv dist_;
  SilentSink silent_;
  EventSink& sink_;      // rank 0: the caller's sink; other ranks: silent
  EventSink& end_sink_;  // every rank reports how it ended
  TrainControl* control_;
  c10::Device device_;
  Precision precision_;
  bool main_;                            // rank 0 (or not data parallel): reports, samples, checkpoints
  double peak_ = -1;                     // FLOP/s per rank for MFU (set_up); -1 when unknown
  std::unique_ptr<CoreSharing> sharing_;  // a CPU run alone: its threads while other LibTorch processes share its cores
  void share_cores();                     // between steps: applies what sharing_ found
  std::unique_ptr<ProcessGroup> group_;  // data parallel only; declared before the reducer that uses it
  std::unique_ptr<GradReducer> reducer_;
  std::unique_ptr<Loader> loader_;
  GPT model_{nullptr};
  std::unique_ptr<Optimizer> optimizer_;      // unsharded runs: AdamW, or Muon + AdamW (optimizer.name)
  std::unique_ptr<ShardedAdamW> sharded_;     // dist.zero=1 with several ranks (engine/torch/parallel/zero.h)
  std::vector<PreparedEvalTask> eval_tasks_;  // eval.tasks, read and tokenized once before step 1
  std::string uid_, checkpoint_dir_;
  int64_t start_step_ = 0, tokens_ = 0, accum_ = 1;
  int64_t val_batches_ = 0;  // eval.val_tokens: evaluations cover exactly its windows (0 = eval.batches)
  int64_t skipped_ = 0, skipped_in_a_row_ = 0;  // steps left out for a non-finite loss or gradients
  std::unique_ptr<LossScaler> scaler_;          // speed.precision=fp16 only
  bool probe_due_ = false;                      // this step's statistics are due: batch_for keeps probe_tokens_
  at::Tensor probe_tokens_;                     // (1, T): the step's first sequence, for the per-layer probe
  int64_t scale_skipped_ = 0;                   // fp16: steps the loss scale skipped (an overflow, then a lower scale)
  std::unique_ptr<SpikeWatch> spikes_;          // health.*: spikes, and the data offset rollbacks left
  std::unique_ptr<MachineHealth> machine_;      // rank 0: the machine's clocks, temperatures, other processes
  std::unique_ptr<SlowdownWatch> slowdown_;     // rank 0: tok/s against its running median
  Clock::time_point started_, last_checkpoint_;
  // Time to eval.target_val_loss: training seconds before this run (a resumed run's checkpoint holds them),
  // when the loop began, the seconds spent outside training since (evaluations, samples, checkpoints), and the
  // step at which the target was reached (0: not yet).
  double train_seconds_before_ = 0, io_seconds_ = 0;
  Clock::time_point loop_started_;
  bool first_reported_ = false;  // TrainControl::first_report went out with the first report
  int64_t target_step_ = 0;
  double seconds_since_start() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  double train_seconds() const {
    return train_seconds_before_ + std::chrono::duration<double>(Clock::now() - loop_started_).count() - io_seconds_;
  }
  bool check_target(EvalEvent& e, double val, double trained_s);
};

}  // namespace tokamak::detail
