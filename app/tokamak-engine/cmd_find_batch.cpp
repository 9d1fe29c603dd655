// `tokamak find-batch`: the largest batch that trains on a GPU. Trains two steps at batch 1, 2, 4, … until the
// device runs out of memory and prints the largest that trained (with --json, one object per try and one with
// the answer, for the studio). It runs in a process of its own, so a try's out-of-memory and the CUDA caching
// allocator's reserved blocks end with it instead of staying in the studio and shrinking the run it sizes.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/tokamak-engine/cli_checks.h"
#include "app/cli/commands.h"
#include "app/cli/config_args.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/util/error.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/train/torch_error.h"
#include "engine/torch/train/trainer.h"

namespace tokamak::cli {
namespace {

struct FindBatchArgs {
  ConfigArgs config;
  int64_t max_batch = 4096;
  bool max_given = false;
  bool json = false;
};

void print(bool json, const nlohmann::json& j, const std::string& text) {
  std::fputs(((json ? j.dump() : text) + "\n").c_str(), stdout);
  std::fflush(stdout);
}

void run_find_batch(const FindBatchArgs& a) {
  Config base = a.config.resolve([](const std::string& path) { return read_checkpoint_info(path).config_json; });
  // On a CPU the limit is the OOM killer, not an error a try can catch: only an explicit --max bounds it there
  // (scripts/gpu-check.sh rehearses the GPU sitting on a CPU that way).
  if (parse_device(base.device).is_cpu() && !a.max_given)
    throw Error("find-batch measures GPU memory; on a CPU memory is not what limits the batch",
                "run it with --set device=cuda, or choose the CPU batch by tok/s (tokamak bench)");
  validate_config(base, cuda_device_count());
  int64_t largest = 0;
  for (int64_t b = 1; b <= a.max_batch; b *= 2) {
    Config c = base;
    c.train.batch_size = b;
    c.train.batch_tokens = 0;  // one micro-step of this size: the batch itself must fit
    c.train.steps = 2, c.schedule.warmup_steps = 0, c.train.log_every = 1;
    c.eval.every = 0, c.eval.batches = 1, c.sample.every = -1;
    c.checkpoint.resume.clear();
    c.memory_check = false;  // the tries measure the limit: the estimate's refusal is not an out-of-memory
    c.name = "find-largest-batch";
    EventSink quiet;
    EndEvent end;
    TrainControl control;
    control.checkpoints = false;  // a try is thrown away: no checkpoint (1.5 GB for GPT-2 124M)
    try {
      end = train(c, quiet, &control);
    } catch (const std::exception& e) {
      end.status = "failed", end.error = torch_error_text(e);
    }
    const bool fits = end.status == "finished";
    const bool oom = !fits && end.error.find("out of memory") != std::string::npos;
    print(a.json, {{"event", "try"}, {"batch", b}, {"fits", fits}},
          "batch " + std::to_string(b) + ": " +
              (fits  ? "fits"
               : oom ? "out of memory"
                     : "failed: " + end.error));
    if (!fits && !oom) throw Error("batch " + std::to_string(b) + " failed: " + end.error, "fix the setup first");
    if (!fits) break;
    largest = b;
    reset_peak_memory(parse_device(c.device));
  }
  print(a.json, {{"event", "largest"}, {"batch", largest}},
        largest ? "largest batch that trains: " + std::to_string(largest) : "even batch 1 does not fit");
}

}  // namespace

void add_find_batch_command(CLI::App& app) {
  auto a = std::make_shared<FindBatchArgs>();
  CLI::App* cmd = app.add_subcommand("find-batch", "the largest batch that trains on a GPU (doubling from 1)");
  a->config.add_to(*cmd);
  cmd->add_option("--max", a->max_batch, "stop doubling here (on a CPU it must be given)")->check(above_zero());
  cmd->add_flag("--json", a->json, "one JSON object per try and one with the answer on stdout");
  cmd->callback([a, cmd] {
    a->max_given = cmd->count("--max") > 0;
    run_find_batch(*a);
  });
}

}  // namespace tokamak::cli
