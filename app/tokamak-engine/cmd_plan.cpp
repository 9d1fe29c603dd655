// `tokamak plan [--config FILE] [--set key=value]... [--device NAME|all] [--gpus N] [--tokens N | --target-loss X]
// [--sort time|cost] [--json]`: before Start, for each device of the catalog and this machine, whether the setup
// fits, how fast it trains, how long it takes and what it costs, and what each number rests on (engine/torch/plan/).
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak-engine/cli_checks.h"
#include "app/cli/commands.h"
#include "app/cli/config_args.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/format.h"
#include "engine/base/plan/plan.h"
#include "engine/base/plan/plan_rates.h"
#include "engine/torch/model/memory_estimate.h"
#include "engine/torch/plan/this_machine.h"

namespace tokamak::cli {
namespace {

struct PlanArgs {
  ConfigArgs config;
  std::string device = "all", sort = "time", db, rates;
  int gpus = 1;
  double tokens = 0, target_loss = 0;
  bool json = false;
};

std::string fixed(double v, const char* format) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string hours_text(double h) {
  if (h <= 0) return "-";
  if (!std::isfinite(h)) return "never";
  if (h < 72) return format_duration(h * 3600);
  if (h < 24 * 730) return fixed(h / 24, "%.0f days");
  return h < 24 * 365 * 1e4 ? fixed(h / 24 / 365, "%.0f years") : fixed(h / 24 / 365, "%.2g years");
}

// Dollars in a column's width whatever the size: a rates file or a catalog entry may make them astronomical.
std::string cost_text(double c) {
  if (!std::isfinite(c)) return "-";
  if (c < 10) return fixed(c, "$%.2f");
  if (c < 1e6) return fixed(c, "$%.0f");
  if (c < 1e9) return fixed(c / 1e6, "$%.4g million");
  if (c < 1e12) return fixed(c / 1e9, "$%.4g billion");
  return fixed(c, "$%.2g");
}

void run_plan(const PlanArgs& a) {
  const Config c = a.config.resolve([](const std::string& path) { return read_checkpoint_info(path).config_json; });
  // The plan is for GPUs this machine may not have: the setup is checked as it would train on one.
  Config on_gpu = c;
  on_gpu.device = "cuda";
  validate_config(on_gpu, 1024);
  DeviceCatalog catalog = load_device_catalog();
  Precision here_precision = Precision::kFp32;
  // This machine is measured (its GEMM rate and copy rate, cached after the first time): only when asked for.
  if (a.device == "all" || a.device == "this")
    catalog.devices.insert(catalog.devices.begin(), this_machine_device(c.threads, &here_precision));
  std::vector<const CatalogDevice*> devices;
  if (a.device == "all")
    for (const CatalogDevice& d : catalog.devices) devices.push_back(&d);
  else
    devices.push_back(&find_device(catalog, a.device));
  // Stored runs: the fractions each kind reached on an architecture, the tokens a target took. A store that cannot
  // be opened leaves the defaults, said in the basis.
  std::unique_ptr<RunStore> store;
  const std::string db = a.db.empty() ? default_db_path() : a.db;
  if (path_exists(db)) store = std::make_unique<RunStore>(db);
  PlanRequest r;
  r.gpus = a.gpus, r.tokens = a.tokens, r.target_loss = a.target_loss;
  if (a.target_loss > 0) {
    const int64_t params = estimate_memory(plan_config(c, *devices.front(), here_precision)).parameters;
    r.tokens_for_target = tokens_for_target(store.get(), params, a.target_loss, &r.target_basis);
    if (r.tokens_for_target <= 0)
      throw Error("no time to val loss " + fixed(a.target_loss, "%g") + ": " + r.target_basis,
                  "ask for a higher --target-loss, or plan by --tokens");
  }
  std::vector<PlanRow> rows;
  for (const CatalogDevice* d : devices)
    rows.push_back(plan_for(c, *d, r, a.rates.empty() ? plan_rates(*d, catalog, store.get(), c.speed.fused_glue) : read_plan_rates(a.rates),
                            here_precision));
  sort_plan(rows, a.sort);
  if (a.json) {
    for (const PlanRow& p : rows) {
      nlohmann::json kinds;
      for (const auto& [k, ms] : p.kind_ms) kinds[k] = ms;
      std::printf("%s\n", nlohmann::json({{"device", p.device},       {"this_machine", p.this_machine},
                                          {"fits", p.fits},           {"fit", p.fit},
                                          {"fix", p.fix},             {"batch_size", p.batch_size},
                                          {"grad_accum", p.grad_accum}, {"activation_checkpointing", p.checkpointing},
                                          {"precision", p.precision}, {"gpus", p.this_machine ? 1 : a.gpus},
                                          {"memory_bytes", p.memory_bytes}, {"device_bytes", p.device_bytes},
                                          {"step_ms", p.step_ms},     {"allreduce_ms", p.allreduce_ms},
                                          {"tok_s", p.tok_s},         {"mfu", p.mfu},
                                          {"tokens", p.tokens},       {"hours", p.hours},
                                          {"cost", p.cost},           {"kind_ms", kinds},
                                          {"basis", p.basis}})
                              .dump()
                              .c_str());
    }
    return;
  }
  std::vector<std::vector<std::string>> table = {
      {"device", "fits", "batch × accum", "precision", "tok/s", "MFU", "time", "cost", "basis"}};
  for (const PlanRow& p : rows)
    table.push_back({p.device, p.fits ? (p.fit.rfind("tight", 0) == 0 ? "tight" : "yes") : "no",
                     std::to_string(p.batch_size) + " × " + std::to_string(p.grad_accum) + (p.checkpointing ? " ckpt" : ""),
                     p.precision,  // what `auto` would take there (a T4: fp16), unless the setup names one
                     p.fits ? format_count(p.tok_s) : "-", p.fits ? fixed(100 * p.mfu, "%.0f%%") : "-",
                     p.fits ? hours_text(p.hours) : "-",
                     p.fits && !p.this_machine ? cost_text(p.cost) : "-", p.basis});
  std::printf("%s", format_text_table(table).c_str());
  const PlanRow& first = rows.front();
  std::printf("\n%s tokens (%s)%s; prices as of %s (%s; change them in %s)\n", format_count(first.tokens).c_str(),
              a.target_loss > 0 ? ("to val loss " + fixed(a.target_loss, "%g") + ": " + r.target_basis).c_str()
              : a.tokens > 0    ? "--tokens"
                                : "train.steps × tokens a step",
              a.gpus > 1 ? (", " + std::to_string(a.gpus) + " GPUs of each").c_str() : "",
              catalog.prices_as_of.c_str(), catalog.price_source.c_str(), user_devices_path().c_str());
  for (const PlanRow& p : rows)
    if (!p.fix.empty() || !p.fits) std::printf("%s: %s\n", p.device.c_str(), p.fit.c_str());
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "will it fit, how fast, how long and what it costs, on each device of the catalog and this one");
  a->config.add_to(*cmd);
  cmd->add_option("--device", a->device, "a catalog device (\"H100 SXM\", \"this\"), or all (the default)");
  cmd->add_option("--gpus", a->gpus, "data-parallel GPUs of each device (default 1)")->check(count_between(1, 100000));
  auto* tokens = cmd->add_option("--tokens", a->tokens, "tokens to train on (default: train.steps × tokens a step)")
                     ->check(above_zero(kMaxPlanTokens));
  cmd->add_option("--target-loss", a->target_loss, "plan the time to this validation loss instead")
      ->check(above_zero())
      ->excludes(tokens);
  cmd->add_option("--sort", a->sort, "time or cost")->check(CLI::IsMember({"time", "cost"}));
  cmd->add_option("--db", a->db, "the run store whose profiled runs and targets the plan reads (default: yours)");
  cmd->add_option("--rates", a->rates,
                  "a JSON file of the fractions of the limits each kind of work reaches, instead of the stored "
                  "runs' or the defaults (docs/PLANNING.md)");
  cmd->add_flag("--json", a->json, "one JSON object per device on stdout");
  cmd->callback([a] { run_plan(*a); });
}

}  // namespace tokamak::cli
