// A plan before Start: for a setup and a device of the catalog (engine/base/plan/device_catalog.h), whether it fits
// (the memory estimate, the largest micro-batch, the accumulation or activation checkpointing it needs), how long
// a step takes (each kind of the step's work ÷ the device's limit × the fraction of that limit the kind reaches),
// tok/s and MFU, the time to a number of tokens or a target loss, and the cost. Every row says what it rests on.
// LibTorch-free: the limits and the fractions come in (plan_rates.h, this_machine.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/base/config/config.h"
#include "engine/base/plan/device_catalog.h"

namespace tokamak {

// The fraction of the device's limit each kind of work reaches (matmul and attention: of the precision's dense
// peak; the memory-bound kinds: of the memory bandwidth), and the host's cost a micro-step per layer (kernel
// launches; none with CUDA graphs). What they rest on, in words.
struct PlanRates {
  std::map<std::string, double> of_limit;
  double overhead_ms_per_layer = 0;
  double allreduce_hidden = 0.5;  // the part of the gradients' all-reduce that backward hides
  std::string basis;
};

// The most tokens a plan is made for (10 quadrillion: a thousand times the largest runs yet), however they are given:
// past it a time or a cost means nothing.
constexpr double kMaxPlanTokens = 1e16;

struct PlanRequest {
  int gpus = 1;             // data-parallel processes (GPUs) on this device type
  double tokens = 0;        // tokens to train on; 0: the setup's own (train.steps × tokens a step)
  double target_loss = 0;   // > 0: the time to this validation loss instead
  double tokens_for_target = 0;  // the tokens the target needs (plan_rates.h); 0 when no target
  std::string target_basis;      // what that number rests on
};

struct PlanRow {
  std::string device;
  bool this_machine = false;
  bool fits = false;
  int64_t batch_size = 0, grad_accum = 1;  // the micro-batch per GPU that fits, and the accumulation that keeps
                                           // the setup's tokens a step
  bool checkpointing = false;              // activation checkpointing needed (or already on)
  std::string fit;                         // "fits: 31.2 GB of 80 GB (estimate +0-5%)", or why not and what fixes it
  std::string fix;                         // the `--set` that makes it fit ("" when it fits as set up or nothing does)
  double memory_bytes = 0, device_bytes = 0;
  std::string precision;  // the precision planned (auto resolved for the device)
  double step_ms = 0, allreduce_ms = 0, tok_s = 0, mfu = 0;
  double tokens = 0, hours = 0, cost = 0;
  std::map<std::string, double> kind_ms;  // each kind's share of the step
  std::string basis;
};

// The setup as it would train on device D: "auto" switches resolved for it (bf16 where the catalog gives the
// device a bf16 peak, else fp32; this machine as its own runs resolve them), device cuda or cpu.
Config plan_config(const Config& c, const CatalogDevice& d, Precision this_machine_precision);

// The row for one device. Throws nothing for a setup that does not fit: the row says so.
PlanRow plan_for(const Config& c, const CatalogDevice& d, const PlanRequest& r, const PlanRates& rates,
                 Precision this_machine_precision = Precision::kFp32);

// The step's time by kind on D: work ÷ (limit × fraction), the larger of compute and memory for each kind, plus the
// launches' overhead. Exposed for tests: a kind table in, a step time out.
std::map<std::string, double> kind_times_ms(const Config& planned, const CatalogDevice& d, const PlanRates& rates,
                                            double peak_flops);

// The rows sorted by time (BY "time") or cost ("cost"): this machine first, rows that do not fit last.
void sort_plan(std::vector<PlanRow>& rows, const std::string& by);

}  // namespace tokamak
