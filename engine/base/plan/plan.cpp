// The plan for one device: fit, step time by kind, tok/s, MFU, time and cost (see plan.h).
#include "engine/base/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/base/util/error.h"
#include "engine/base/util/format.h"
#include "engine/base/perf/flops.h"
#include "engine/base/perf/speed_of_light.h"
#include "engine/base/plan/memory_estimate.h"

namespace tokamak {
namespace {

// The estimate ran 1.5-3.5% over the allocator's peaks on the H200 sittings (engine/base/plan/memory_estimate.cpp):
// a setup within this much of the card is called tight, not sure to fit.
constexpr double kEstimateOver = 0.05;

// C is plan_config()'s: its precision is concrete.
double estimated_bytes(const Config& c) {
  return static_cast<double>(estimate_memory(c, c.speed.precision).total());
}

std::string gb(double bytes) { return format_bytes(bytes); }

}  // namespace

Config plan_config(const Config& given, const CatalogDevice& d, Precision this_machine_precision) {
  Config c = given;
  c.device = d.this_machine ? "cpu" : "cuda";
  if (c.speed.precision == Precision::kAuto)
    // As `auto` would take on the device: bf16 where it has it (compute capability 8.0 on), fp16 with a loss scale
    // where it has fp16 tensor cores only (7.x), fp32 elsewhere.
    c.speed.precision = d.this_machine         ? this_machine_precision
                        : d.flops.count("bf16") ? Precision::kBf16
                        : d.flops.count("fp16") ? Precision::kFp16
                                                : Precision::kFp32;
  if (!d.this_machine && c.speed.precision == Precision::kTf32 && !d.flops.count("tf32"))
    c.speed.precision = Precision::kFp32;
  c.speed.layers = resolved_layers(c, c.speed.precision);
  if (d.this_machine) c.speed.cuda_graphs = false;
  return c;
}

std::map<std::string, double> kind_times_ms(const Config& c, const CatalogDevice& d, const PlanRates& rates,
                                            double peak) {
  std::map<std::string, double> ms;
  for (const auto& [kind, work] : step_work(c)) {
    const auto f = rates.of_limit.find(kind);
    const double fraction = f != rates.of_limit.end() && f->second > 0 ? f->second : 0.5;
    const double compute = work.flops > 0 ? 1e3 * work.flops / (peak * fraction) : 0;
    const double memory = work.bytes > 0 ? 1e3 * work.bytes / (d.memory_bytes_per_s * fraction) : 0;
    ms[kind] = std::max(compute, memory);
  }
  // The host's launches: each layer's kernels, each micro-step (none when CUDA graphs replay the step).
  if (!c.speed.cuda_graphs)
    ms["other"] = rates.overhead_ms_per_layer * static_cast<double>(c.model.n_layer * grad_accum_steps(c));
  return ms;
}

PlanRow plan_for(const Config& given, const CatalogDevice& d, const PlanRequest& r, const PlanRates& rates,
                 Precision this_machine_precision) {
  PlanRow row;
  row.device = d.name, row.this_machine = d.this_machine;
  Config c = plan_config(given, d, this_machine_precision);
  const int gpus = d.this_machine ? 1 : std::max(1, r.gpus);
  c.dist.gpus = gpus;
  row.precision = name_of(c.speed.precision);
  row.device_bytes = d.memory_bytes;
  const int64_t want_batch = c.train.batch_size, want_accum = std::max<int64_t>(1, grad_accum_steps(c));
  c.train.batch_tokens = 0, c.train.grad_accum = want_accum;  // the setup's tokens a step stay as they are
  const auto fits = [&](const Config& x) { return estimated_bytes(x) <= d.memory_bytes; };
  // The largest micro-batch that fits: halved from the setup's, the accumulation doubled to keep its tokens.
  Config tried = c;
  while (!fits(tried) && tried.train.batch_size > 1)
    tried.train.batch_size = (tried.train.batch_size + 1) / 2,
    tried.train.grad_accum = want_accum * ((want_batch + tried.train.batch_size - 1) / tried.train.batch_size);
  if (!fits(tried) && !c.speed.activation_checkpointing) {  // then activation checkpointing, from the setup's batch
    Config ck = c;
    ck.speed.activation_checkpointing = true;
    while (!fits(ck) && ck.train.batch_size > 1)
      ck.train.batch_size = (ck.train.batch_size + 1) / 2,
      ck.train.grad_accum = want_accum * ((want_batch + ck.train.batch_size - 1) / ck.train.batch_size);
    if (fits(ck)) tried = ck;
  }
  row.fits = fits(tried);
  row.memory_bytes = estimated_bytes(tried);
  row.batch_size = tried.train.batch_size, row.grad_accum = tried.train.grad_accum;
  row.checkpointing = tried.speed.activation_checkpointing;
  if (!row.fits) {
    row.fit = "does not fit: " + gb(estimated_bytes(tried)) + " at batch 1 with activation checkpointing, " +
              gb(d.memory_bytes) + " on the device" +
              (gpus > 1 && c.dist.zero != 1 ? "; dist.zero=1 shares AdamW's state across the GPUs" : "");
    row.fix = gpus > 1 && c.dist.zero != 1 ? "dist.zero=1" : "";
  } else {
    const bool tight = row.memory_bytes > (1 - kEstimateOver) * d.memory_bytes;
    row.fit = std::string(tight ? "tight: " : "fits: ") + gb(row.memory_bytes) + " of " + gb(d.memory_bytes) +
              " (the estimate runs 0-5% over measured peaks)";
    std::vector<std::string> sets;
    if (row.batch_size != want_batch)
      sets.push_back("train.batch_size=" + std::to_string(row.batch_size)),
          sets.push_back("train.grad_accum=" + std::to_string(row.grad_accum));
    if (row.checkpointing && !c.speed.activation_checkpointing) sets.push_back("speed.activation_checkpointing=true");
    for (const std::string& s : sets) row.fix += (row.fix.empty() ? "" : " ") + s;
    if (!row.fix.empty()) row.fit += "; as set up it needs " + gb(estimated_bytes(c)) + ", so: " + row.fix;
  }

  std::string peak_precision;
  const double peak = device_peak(d, tried.speed.precision, &peak_precision);
  const Precision planned = tried.speed.precision;
  if (peak_precision != (planned == Precision::kBf16Pure ? "bf16" : name_of(planned)))
    row.precision = name_of(planned) + " (no " + name_of(planned) + " peak: planned at fp32's)";
  row.kind_ms = kind_times_ms(tried, d, rates, peak);
  double step = 0;
  for (const auto& [kind, ms] : row.kind_ms) step += ms;
  // Data parallel: the gradients' ring all-reduce over the interconnect, the part backward does not hide.
  const double params = static_cast<double>(count_parameters(parameter_shape(tried.model)));
  if (gpus > 1 && d.interconnect_bytes_per_s > 0) {
    const double grad_bytes = (tried.speed.precision == Precision::kBf16Pure ? 2 : 4) * params;
    const double ring = 2.0 * (gpus - 1) / gpus * grad_bytes / d.interconnect_bytes_per_s;
    row.allreduce_ms = 1e3 * ring * (1 - rates.allreduce_hidden);
    step += row.allreduce_ms;
  }
  row.step_ms = step;
  const double tokens_per_step = static_cast<double>(tried.train.batch_size * train_context(tried) *
                                                     tried.train.grad_accum) * gpus;
  row.tok_s = step > 0 ? tokens_per_step / (step / 1e3) : 0;
  const double flop_params = params - static_cast<double>(tried.model.context * tried.model.n_embd);
  row.mfu = row.tok_s * flops_per_token(static_cast<int64_t>(flop_params), tried.model.n_layer, tried.model.n_embd,
                                        train_context(tried)) /
            (peak * gpus);
  row.tokens = r.target_loss > 0 ? r.tokens_for_target
               : r.tokens > 0   ? r.tokens
                                : tokens_per_step * static_cast<double>(tried.train.steps);
  if (!(row.tokens <= kMaxPlanTokens)) {
    char said[160];
    std::snprintf(said, sizeof said, "%.3g tokens to plan for (%s), more than the %.0e a plan takes", row.tokens,
                  r.target_loss > 0 ? "to the target loss" : r.tokens > 0 ? "--tokens" : "train.steps × tokens a step",
                  kMaxPlanTokens);
    throw Error(said, r.target_loss > 0 ? "ask for a higher --target-loss, or plan by --tokens"
                                        : "lower train.steps, or plan by --tokens");
  }
  row.hours = row.tok_s > 0 ? row.tokens / row.tok_s / 3600 : 0;
  row.cost = row.hours * gpus * d.price_per_hour;
  row.basis = rates.basis;
  if (r.target_loss > 0) row.basis += "; tokens: " + r.target_basis;
  return row;
}

void sort_plan(std::vector<PlanRow>& rows, const std::string& by) {
  std::stable_sort(rows.begin(), rows.end(), [&](const PlanRow& a, const PlanRow& b) {
    if (a.this_machine != b.this_machine) return a.this_machine;  // the reader's own first
    if (a.fits != b.fits) return a.fits;
    return by == "cost" ? a.cost < b.cost : a.hours < b.hours;
  });
}

}  // namespace tokamak
