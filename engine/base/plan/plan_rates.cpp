// Where a plan's fractions and a target's tokens come from (see plan_rates.h).
#include "engine/base/plan/plan_rates.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/host.h"
#include "engine/base/perf/op_kinds.h"
#include "engine/base/perf/speed_of_light.h"

#include <nlohmann/json.hpp>

namespace tokamak {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool compute_kind(const std::string& kind) { return kind == "matmul" || kind == "attention"; }

}  // namespace

PlanRates default_rates(bool gpu, bool fused_glue) {
  PlanRates r;
  if (gpu) {
    // Tokamak's step on the H200 at its fifth sitting (GPT-2 124M, T=1024, bf16 autocast, batch 64, cuDNN
    // attention, fused AdamW; docs/PERFORMANCE.md): matmuls 68.4 ms for 48.6 TFLOP, attention 17.8 ms for 3.71
    // TFLOP, the head 6.7 ms for 13.2 GB, AdamW 1.5 ms for 3.5 GB, 6.6 ms of other kernels and host time; the glue
    // (LayerNorms, GELU, residual adds, casts: 71.4 GB) 45.3 ms with fused layers (448K tok/s) and 24.8 ms with
    // speed.fused_glue (521K). Each as a fraction of 989 TFLOP/s or 4.8 TB/s; the glue's time is spread over its
    // kinds by their bytes (the casts of activations have no bytes of their own in the count).
    const double glue = fused_glue ? 0.60 : 0.326;
    r.of_limit = {{"matmul", 0.72},     {"attention", 0.21}, {"head", 0.41},         {"norm", glue},
                  {"activation", glue}, {"residual", glue},  {"casts/copies", glue}, {"optimizer", 0.48}};
    r.overhead_ms_per_layer = 6.6 / 12;
    r.basis = std::string("default fractions (Tokamak's H200 step, GPT-2 124M bf16") +
              (fused_glue ? ", fused glue)" : ")");
  } else {
    // The default run (nano, fp32, batch 16, T=128) profiled on a 2-core Xeon (avx512_bf16, no AMX; `tokamak train
    // --kernels 10 --set train.steps=60`): matmuls 172 of 331 GFLOP/s, attention 41 GFLOP/s, the head 9.1 GB/s,
    // LayerNorms 8.0, GELU 6.0, AdamW 18.6 against 23.1 GB/s from memory (the residual adds, in cache, beat it: 1);
    // 15.8 ms of other and uncounted work over 4 layers.
    r.of_limit = {{"matmul", 0.52},     {"attention", 0.125}, {"head", 0.39},         {"norm", 0.35},
                  {"activation", 0.26}, {"residual", 1.0},    {"casts/copies", 0.35}, {"optimizer", 0.8}};
    r.overhead_ms_per_layer = 15.8 / 4;
    r.basis = "default fractions (the default run on a 2-core Xeon)";
  }
  return r;
}

PlanRates plan_rates(const CatalogDevice& d, const DeviceCatalog& catalog, RunStore* store, bool fused_glue) {
  PlanRates r = default_rates(!d.this_machine, fused_glue);
  std::map<std::string, std::vector<double>> fractions;
  std::vector<double> overheads;
  int runs = 0;
  const std::string here = d.this_machine ? this_host() : "";
  // Only the profiled runs: a plan is made at every change of the studio's setup, and a store holds thousands.
  for (const int64_t id : store ? store->profiled_runs() : std::vector<int64_t>{}) {
    const RunInfo run = store->run(id);
    const CatalogDevice* ran_on = nullptr;
    if (d.this_machine) {
      if (run.device != "cpu" || run.host != here) continue;
      ran_on = &d;
    } else {
      if (run.device.rfind("cuda", 0) != 0) continue;
      ran_on = device_for_gpu_name(catalog, run.gpu_name);
      if (!ran_on || ran_on->architecture != d.architecture) continue;
    }
    const SpeedOfLightRecord sol = store->speed_of_light(run.id);
    if (sol.kinds.empty()) continue;
    Precision precision = Precision::kFp32;
    int64_t layers = 1, accum = 1;
    try {
      const Config c = config_from_json(run.config_json);
      precision = c.speed.precision != Precision::kAuto ? c.speed.precision
                  : d.this_machine                     ? Precision::kFp32
                                                       : Precision::kBf16;
      layers = c.model.n_layer, accum = std::max<int64_t>(1, grad_accum_steps(c));
    } catch (const std::exception&) {
      continue;  // a config this build cannot read says nothing it can use
    }
    const double peak = device_peak(*ran_on, precision);
    double loose_ms = 0;
    for (const KindFloorRow& k : sol.kinds) {
      if (k.ms <= 0) continue;
      // Time in kinds with no counted work (other, unattributed; casts without autocast) is the step's overhead.
      if (k.kind == "other" || k.kind == "unattributed" || (k.flops <= 0 && k.bytes <= 0)) {
        loose_ms += k.ms;
        continue;
      }
      const double achieved = compute_kind(k.kind) ? k.flops / (k.ms / 1e3) : k.bytes / (k.ms / 1e3);
      const double limit = compute_kind(k.kind) ? peak : ran_on->memory_bytes_per_s;
      if (achieved > 0 && limit > 0) fractions[k.kind].push_back(achieved / limit);
    }
    overheads.push_back(loose_ms / static_cast<double>(layers * accum));
    ++runs;
  }
  if (runs == 0) {
    r.basis += d.this_machine ? ": no profiled run on this machine yet" : ": no profiled run on " + d.architecture + " yet";
    return r;
  }
  for (const auto& [kind, f] : fractions) r.of_limit[kind] = median(f);
  r.overhead_ms_per_layer = median(overheads);
  r.basis = "from " + std::to_string(runs) + " profiled run" + (runs == 1 ? "" : "s") + " on " +
            (d.this_machine ? std::string("this machine") : d.architecture);
  return r;
}

PlanRates read_plan_rates(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(path + " is not JSON: " + e.what(), "fix the file (docs/PLANNING.md shows one)");
  }
  PlanRates r = default_rates(true, false);
  r.basis = "the fractions of " + path;
  const auto bad = [&](const std::string& field, const std::string& want) {
    return Error(path + ": '" + field + "' " + want, "fix that field (docs/PLANNING.md shows a rates file)");
  };
  if (!j.is_object()) throw bad("(the file)", "must be a JSON object");
  if (j.contains("of_limit")) {
    if (!j["of_limit"].is_object()) throw bad("of_limit", "must be an object of kinds to fractions");
    for (const auto& [kind, v] : j["of_limit"].items()) {
      if (std::find(op_kinds().begin(), op_kinds().end(), kind) == op_kinds().end())
        throw bad("of_limit." + kind, "is no kind of work (tokamak bench --kernels lists them)");
      // Below a ten-thousandth of its limit no kind of work runs on a device worth planning for; such a fraction
      // only makes a time of astronomical years.
      if (!v.is_number() || !(v.get<double>() >= 1e-4) || v.get<double>() > 1)
        throw bad("of_limit." + kind, "must be a fraction from 0.0001 to 1");
      r.of_limit[kind] = v.get<double>();
    }
  }
  if (j.contains("overhead_ms_per_layer")) {
    // A layer's launches take microseconds; a second of them is already no GPU's.
    if (!j["overhead_ms_per_layer"].is_number() || !(j["overhead_ms_per_layer"].get<double>() >= 0) ||
        j["overhead_ms_per_layer"].get<double>() > 1000)
      throw bad("overhead_ms_per_layer", "must be a number of milliseconds from 0 to 1000");
    r.overhead_ms_per_layer = j["overhead_ms_per_layer"].get<double>();
  }
  if (j.contains("allreduce_hidden")) {
    if (!j["allreduce_hidden"].is_number() || j["allreduce_hidden"].get<double>() < 0 ||
        j["allreduce_hidden"].get<double>() > 1)
      throw bad("allreduce_hidden", "must be a fraction in [0, 1]");
    r.allreduce_hidden = j["allreduce_hidden"].get<double>();
  }
  if (j.contains("basis")) {
    if (!j["basis"].is_string()) throw bad("basis", "must be a string");
    r.basis = j["basis"].get<std::string>();
  }
  return r;
}

double tokens_for_target(RunStore* store, int64_t n_params, double target, std::string* basis) {
  std::vector<double> reached;
  if (store) {
    for (const RunListing& l : store->list_runs()) {
      const RunInfo& run = l.run;
      if (run.tokens_per_step <= 0 || std::abs(static_cast<double>(run.n_params - n_params)) > 0.01 * n_params)
        continue;
      for (const MetricRow& m : store->metrics(run.id))
        if (const double v = m["val_loss"]; !std::isnan(v) && v <= target) {
          reached.push_back(static_cast<double>(m.step) * static_cast<double>(run.tokens_per_step));
          break;
        }
    }
  }
  if (!reached.empty()) {
    *basis = "from " + std::to_string(reached.size()) + " stored run" + (reached.size() == 1 ? "" : "s") +
             " of this size that reached it";
    return median(reached);
  }
  const double n = static_cast<double>(n_params);
  const double left = target - 1.69 - 406.4 / std::pow(n, 0.34);
  if (left <= 0) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "no stored run of this size reached it, and Hoffmann et al.'s law puts %.3g below what %.3g "
                  "parameters reach with any data",
                  target, n);
    *basis = why;
    return 0;
  }
  *basis = "Hoffmann et al.'s law (their corpus, not yours): no stored run of this size reached it";
  return std::pow(410.7 / left, 1 / 0.28);
}

}  // namespace tokamak
