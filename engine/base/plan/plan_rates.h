// What a plan's step time rests on: the fraction of its limit each kind of work reaches on a device's
// architecture, from stored profiled runs (`bench --kernels`, `train --kernels`) on that architecture where there
// are some, else from named defaults; and the tokens a target loss needs, from stored runs of the same size that
// reached it, else a stated rule. LibTorch-free.
#pragma once
#include <string>

#include "engine/base/plan/device_catalog.h"
#include "engine/base/plan/plan.h"

namespace tokamak {

class RunStore;

// The defaults: on a GPU, the fractions Tokamak's step reached on the H200 (GPT-2 124M, bf16, batch 64; the glue's
// with speed.fused_glue or without; docs/PLANNING.md); on a CPU, those of the default run on a 2-core Xeon.
PlanRates default_rates(bool gpu, bool fused_glue);

// The rates for D: the median fraction of each kind over the store's profiled runs on D's architecture (this
// machine: the profiled runs on this CPU), the rest from the defaults; the basis says which. STORE may be null.
PlanRates plan_rates(const CatalogDevice& d, const DeviceCatalog& catalog, RunStore* store, bool fused_glue);

// A user's own rates: {"of_limit": {"matmul": 0.7, …}, "overhead_ms_per_layer": 0.17, "allreduce_hidden": 0.5,
// "basis": "…"}; kinds not given keep the GPU defaults. Bad JSON or a fraction outside (0, 1] throws Error naming
// the file and the field.
PlanRates read_plan_rates(const std::string& path);

// Tokens a run of N_PARAMS parameters needs to reach validation loss TARGET: the median over the store's runs of
// that size that reached it (their first eval at or below it), else Hoffmann et al.'s (2022) fitted law
// L(N, D) = 1.69 + 406.4/N^0.34 + 410.7/D^0.28 solved for D (a different corpus gives different losses: stated).
// Returns 0 when neither can say (a target below what the law allows at that size); BASIS says which.
double tokens_for_target(RunStore* store, int64_t n_params, double target, std::string* basis);

}  // namespace tokamak
