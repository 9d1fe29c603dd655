// `tokamak train`: one training run from the command line. Ctrl-C, SIGTERM and SIGHUP stop cleanly (with a
// checkpoint); a second one ends the process at once; a closed stdout does not end the run (signals.h).
// Data parallel: with --gpus N (dist.gpus) and no launcher around, this process becomes the launcher of N
// workers (this same command line with RANK etc. set); under a launcher (ours, torchrun, srun) it is one
// worker, and only rank 0 prints and records the run.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>

#include "app/cli/commands.h"
#include "engine/base/run/events.h"
#include "engine/base/util/cores.h"
#include "app/cli/config_args.h"
#include "app/cli/control_channel.h"
#include "app/tokamak-engine/control_folder.h"
#include "app/tokamak-engine/kernel_profile.h"
#include "app/tokamak-engine/printer.h"
#include "app/tokamak-engine/run_session.h"
#include "app/tokamak-engine/signals.h"
#include "engine/base/config/choices.h"
#include "engine/base/config/config_table.h"
#include "engine/torch/parallel/dist_env.h"
#include "engine/torch/parallel/launch.h"
#include "engine/torch/model/memory_estimate.h"
#include "engine/base/run/journal.h"
#include "engine/fleet/notify/notify.h"
#include "engine/fleet/notify/notify_sink.h"
#include "engine/base/store/store_sink.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/plan/run_prediction.h"
#include "engine/torch/train/spike_trial.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/util/error.h"
#include "engine/torch/train/torch_error.h"
#include "engine/base/util/format.h"

namespace tokamak::cli {
namespace {

// The launcher counts stop signals and lets launch_workers forward them (first: stop, second: kill).
std::atomic<int> g_launcher_interrupts{0};

struct TrainArgs {
  ConfigArgs config;
  std::string db;
  std::string name;
  bool json = false;
  bool no_store = false;
  bool control = false;       // --control: pause/resume/stop lines on stdin (app/cli/control_channel.h)
  bool detach = false;        // --detach: start the run in a session of its own and return (run_session.h)
  int64_t gpus = 0;           // --gpus: dist.gpus
  int64_t halt_at_step = 0;   // --halt-at-step: TrainControl::halt_at_step (a sweep's rung)
  std::string kernels_given;  // --kernels N as typed (kernels_to_list)
  int kernels = 0;            // the N costliest kernels of a window of steps (kernel_profile.h); 0: no profile
};

// Starts dist.gpus workers of this command line and waits for them; the workers print and record.
void note_control(const std::string& s) { std::fprintf(stderr, "tokamak: %s\n", s.c_str()); }

int launch(const Config& c, bool control, const RunFolder& folder) {
  const bool cuda = parse_device(c.device).is_cuda();
  if (cuda && c.dist.gpus > cuda_device_count())
    throw Error("--gpus " + std::to_string(c.dist.gpus) + " but this machine has " +
                    std::to_string(cuda_device_count()) + " GPU(s)",
                "lower --gpus, or use torchrun / srun to run across machines (docs/multi-gpu.md)");
  std::fprintf(stderr, "launching %lld %s (%s)\n", static_cast<long long>(c.dist.gpus),
               cuda ? "GPU processes" : "CPU processes", cuda ? "NCCL" : "Gloo");
  LaunchOptions lo;
  lo.world_size = static_cast<int>(c.dist.gpus);
  lo.grace = std::chrono::seconds(c.dist.timeout_s + 10);
  lo.interrupts = &g_launcher_interrupts;
  lo.note = [](const std::string& s) { std::fprintf(stderr, "tokamak launcher: %s\n", s.c_str()); };
  LaunchResult r;
  {
    CountSignals count(&g_launcher_interrupts);
    // The ranks agree on stop at report steps; pause is not offered to several ranks.
    std::unique_ptr<ControlChannel> channel;
    if (control)
      channel = std::make_unique<ControlChannel>(
          ControlHandlers{{},
                          {},
                          [] {
                            int none = 0;  // the first stop asks the ranks to stop; a second signal would kill them
                            g_launcher_interrupts.compare_exchange_strong(none, 1);
                          },
                          {},
                          {}},
          note_control);
    // The run folder's control files reach the launcher too; only stop is offered to several ranks.
    ControlFolder files(folder,
                        ControlHandlers{{},
                                        {},
                                        [] {
                                          int none = 0;
                                          g_launcher_interrupts.compare_exchange_strong(none, 1);
                                        },
                                        {},
                                        {}},
                        note_control);
    r = launch_workers(lo);
  }
  if (r.failed_rank >= 0)
    throw Error("data-parallel training failed: " + r.reason,
                "each rank's own error is above; the run is marked failed and rank 0 kept its last checkpoint");
  return 0;
}

// `train --detach`: the run goes on in its own session; this prints where it is and returns.
int detach(Config c, const RunIdentity& id, const TrainArgs& args) {
  if (args.control)
    throw Error("--detach and --control do not go together (a detached run reads no stdin)",
                "control a detached run with `tokamak runs control " + id.uid + " pause|resume|stop|sample`");
  open_run_folder(id);
  c.name = id.name;
  std::vector<std::string> more;
  if (!args.db.empty()) more.insert(more.end(), {"--db", args.db});
  if (args.no_store) more.push_back("--no-store");
  if (args.halt_at_step > 0) more.insert(more.end(), {"--halt-at-step", std::to_string(args.halt_at_step)});
  if (args.kernels > 0) more.insert(more.end(), {"--kernels", std::to_string(args.kernels)});
  const long pid = start_detached(id, config_to_json(c, 2), more);
  if (args.json)
    std::printf(
        "%s\n",
        nlohmann::json(
            {{"event", "detached"}, {"run_uid", id.uid}, {"name", id.name}, {"folder", id.folder.path}, {"pid", pid}})
            .dump()
            .c_str());
  else
    std::printf("run %s (%s) started detached, pid %ld, in %s\nfollow it: tokamak runs follow %s\n", id.uid.c_str(),
                id.name.c_str(), pid, id.folder.path.c_str(), id.uid.c_str());
  std::fflush(stdout);
  return 0;
}

// Runs BODY as the owner of the run folder: the pid file first, the exit file last, whatever BODY does.
int as_owner(const RunFolder& folder, const std::function<EndEvent()>& body) {
  // Written again only when the launcher's child did not write it before exec: its time is when this process
  // began, from which ControlFolder takes the control commands as this process's.
  if (!pid_file_names(folder, ::getpid())) begin_run_segment(folder, ::getpid());
  EndEvent end;
  try {
    end = body();
  } catch (const std::exception& e) {
    write_exit_file(folder, "failed", 1, torch_error_text(e));
    throw;
  }
  write_exit_file(folder, end.status, end.status == "failed" ? 1 : 0, end.error);
  if (end.status == "failed") throw Error("training failed: " + end.error);
  return 0;
}

// Trains C (prepare_run's: resolved and checked), stopped by signals and by the control lines and files this process answers to.
EndEvent train_with_controls(const Config& c, const TrainArgs& args, const DistEnv& dist, const RunIdentity& id,
                             FanOutSink& sinks, TrainControl& control) {
  const bool main_rank = dist.rank == 0;
  EndEvent end;
  StopOnSignals signals(&control.stop);
  // Under our launcher the launcher reads the control lines and files (the ranks share its stdin).
  std::unique_ptr<ControlChannel> channel;
  std::unique_ptr<ControlFolder> files;
  ControlHandlers handlers{[&] { control.pause = true; },
                           [&] { control.pause = false; },
                           [&] { control.stop = true; },
                           [&] { control.sample = true; },
                           {}};
  if (dist.distributed()) handlers = ControlHandlers{{}, {}, [&] { control.stop = true; }, {}, {}};
  if (args.control && !dist.distributed()) channel = std::make_unique<ControlChannel>(handlers, note_control);
  if (main_rank && dist.source != "tokamak") files = std::make_unique<ControlFolder>(id.folder, handlers, note_control);
  try {
    end = train_prepared(c, sinks, &control, dist);
  } catch (const Cancelled& e) {
    // Stopped before step 1 (still tokenizing): the user's stop, so the run ends stopped, not failed.
    std::fprintf(stderr, "tokamak: stopped before step 1: %s\n", e.message().c_str());
    end.status = "stopped";
  }
  return end;
}

// After the run: its kernel profile, what the store recorded, and a notification that was not sent.
void report_after_run(const Config& c, KernelProfile* kernels, std::unique_ptr<StoreSink>& store, NotifySink* notify) {
  KernelProfile::Result profile;
  if (kernels) {
    profile = kernels->finish(c);
    std::fputs(profile.text.c_str(), stderr);  // human output, as every line of train's but --json's events
  }
  if (store) {
    store->flush();
    if (auto error = store->error()) {
      std::fprintf(stderr, "tokamak: the run store could not record everything: %s\n", error->what());
    } else {
      std::fprintf(stderr, "recorded as run %lld in %s\n", static_cast<long long>(store->run_id()),
                   store->path().c_str());
      store_profile(store, profile.record);
    }
  }
  if (notify && !notify->last_failure().empty())
    std::fprintf(stderr, "tokamak: note: a notification was not sent: %s\n", notify->last_failure().c_str());
}

EndEvent train_here(Config c, const TrainArgs& args, const DistEnv& dist, const RunIdentity& id) {
  const bool main_rank = dist.rank == 0;
  PrinterSink printer(args.json);
  FanOutSink sinks;
  if (main_rank) sinks.add(&printer);
  TrainControl control;
  control.run_uid = id.uid;
  control.halt_at_step = args.halt_at_step;
  // What `tokamak plan` says of this run here, in its first report (engine/torch/plan/run_prediction.h).
  if (main_rank)
    control.first_report = [&c, &args, world = dist.world_size] {
      std::string why_not;
      const Metrics m = run_prediction(c, world, args.no_store ? "" : args.db.empty() ? default_db_path() : args.db,
                                       &why_not);
      if (!why_not.empty()) std::fprintf(stderr, "tokamak: note: %s\n", why_not.c_str());
      return m;
    };
  // A person trying the spike alarms end to end (docs/RELIABILITY.md): garbage tokens at a step they choose.
  if (const char* at = std::getenv("TOKAMAK_TRY_SPIKE_AT"); at && *at) {
    int64_t from = 0, to = 0;
    parse_spike_trial(at, &from, &to);
    control.batch_hook = garbage_hook(from, to, c.model.vocab_size);
    std::fprintf(stderr, "tokamak: TOKAMAK_TRY_SPIKE_AT: step %lld reads garbage tokens (%lld steps of them)\n",
                 static_cast<long long>(from + 1), static_cast<long long>(to - from));
  }
  // Rank 0 keeps the journal: every event, whoever reads it (engine/base/run/README.md).
  std::unique_ptr<JournalWriter> journal;
  std::string journal_error;
  if (main_rank) {
    journal = std::make_unique<JournalWriter>(id.folder.journal());
    printer.set_journal(journal.get(), [&](const std::string& why) {
      journal_error = why;
      control.stop = true;  // the run ends at this step's end, with a checkpoint if the disk allows one
      std::fprintf(stderr,
                   "tokamak: the run journal cannot be written: %s; stopping the run (a checkpoint is "
                   "attempted) (hint: free space on that disk, then resume from the last checkpoint)\n",
                   why.c_str());
    });
  }
  // Opened before training so that a database that cannot be written fails before step 1.
  std::unique_ptr<StoreSink> store;
  if (!args.no_store && main_rank) {
    // Two processes must never train one run: refuse to resume a run whose process is still alive.
    if (!c.checkpoint.resume.empty())
      RunStore(args.db).refuse_live_run(read_checkpoint_info(c.checkpoint.resume).run_uid);
    store = std::make_unique<StoreSink>(args.db);
    sinks.add(store.get());
  }
  // Notifications (engine/fleet/notify/notify_sink.h): a settings file that cannot be read costs the run nothing but them.
  std::unique_ptr<NotifySink> notify;
  if (main_rank) {
    try {
      notify = std::make_unique<NotifySink>(read_notify_settings());
      sinks.add(notify.get());
    } catch (const Error& e) {
      std::fprintf(stderr, "tokamak: warning: no notifications for this run: %s\n", e.what());
    }
  }
  // The first step is skipped (its allocations and first launches are no steady step); rank 0's kernels stand
  // for every rank's.
  std::unique_ptr<KernelProfile> kernels;
  if (args.kernels > 0 && main_rank)
    kernels = std::make_unique<KernelProfile>(args.kernels, parse_device(c.device).is_cuda(), 1, kTrainKernelSteps),
    sinks.add(kernels.get());
  EndEvent end = train_with_controls(c, args, dist, id, sinks, control);
  report_after_run(c, kernels.get(), store, notify.get());
  if (!journal_error.empty() && end.status != "failed")
    end.status = "failed", end.error = "the run journal could not be written: " + journal_error;
  return end;
}

int run_train(const TrainArgs& args) {
  if (const char* at = std::getenv("TOKAMAK_TRY_SPIKE_AT"); at && *at) {  // refused before any work
    int64_t from = 0, to = 0;
    parse_spike_trial(at, &from, &to);
  }
  Config c = args.config.resolve([](const std::string& path) { return read_checkpoint_info(path).config_json; });
  if (!args.name.empty()) c.name = args.name;
  if (args.gpus > 0) c.dist.gpus = args.gpus;
  if (args.kernels > 0) refuse_unprofilable(c);
  const DistEnv dist = dist_env_from_environment();
  if (!dist.distributed() && c.dist.gpus > 1) {
    validate_config(c, cuda_device_count());
    const RunIdentity id = identify_run_here(resolved_setup(c));
    if (args.detach) return detach(c, id, args);  // config.json keeps `auto`: the run resolves it
    open_run_folder(id);
    ::setenv("TOKAMAK_RUN_UID", id.uid.c_str(), 1);  // the workers name the same run (run_session.h)
    return as_owner(id.folder, [&] {
      launch(c, args.control, id.folder);
      return EndEvent{"finished", "", 0, 0, 0};
    });
  }
  if (args.detach && dist.distributed())
    throw Error("--detach under a launcher (torchrun, srun) is not supported",
                "detach the launcher instead, or use `tokamak train --gpus N --detach`");
  c.dist.gpus = dist.world_size;  // under a launcher its world size wins over --gpus
  const bool auto_precision = c.speed.precision == Precision::kAuto;
  // Resolved and checked once in this process: the name, the table and the run use it.
  const Config resolved = prepare_run(c, dist);
  const RunIdentity id = identify_run_here(resolved);
  if (args.detach) return detach(c, id, args);  // config.json keeps `auto`: the run resolves it, and says so
  c = resolved;
  c.name = id.name;
  const bool main_rank = dist.rank == 0;
  if (main_rank) {
    // The trainer divides the cores among the processes of one machine when threads is 0.
    const int cores = cores_given(), local = std::max(1, dist.local_world_size);
    const int64_t threads = c.threads > 0 ? c.threads : std::max(1, cores / local);
    std::vector<std::pair<std::string, std::string>> derived = {
        {"threads", std::to_string(threads) + (dist.distributed() ? " per rank" : "")},
        {"device name", device_name(parse_device(c.device))},
        {"run folder", id.folder.path}};
    if (auto_precision)
      derived.push_back(
          {"precision", name_of(c.speed.precision) +
                            (c.speed.precision == Precision::kBf16 ? " (auto: hardware bf16)"
                                             : c.speed.precision == Precision::kFp16
                                                 ? " (auto: fp16 tensor cores but no bf16 (compute capability 7.x): "
                                                   "fp16 with a dynamic loss scale)"
                                             : parse_device(c.device).is_cpu() && cpu_has_bf16_instructions()
                                                 ? " (auto: this CPU's bf16 GEMM measured slower than fp32's)"
                                                 : " (auto: no hardware bf16 here)")});
    if (dist.distributed())
      derived.push_back({"ranks", std::to_string(dist.world_size) + " (" + dist.source + ", " +
                                      (parse_device(c.device).is_cuda() ? "NCCL" : "Gloo") + ")"});
    if (dist.distributed() && c.dist.zero == 1) {
      const MemoryEstimate m = estimate_memory(c);
      derived.push_back({"ZeRO-1", "AdamW state " + format_bytes(static_cast<double>(m.optimizer)) +
                                       " per rank (saves " + format_bytes(static_cast<double>(m.optimizer_saved)) +
                                       ")"});
    }
    std::fputs(format_config_table(c, derived).c_str(), stderr);
    open_run_folder(id);
  }
  // Our launcher owns the folder of its ranks (pid, exit); otherwise the process that trains rank 0 does.
  if (main_rank && dist.source != "tokamak") return as_owner(id.folder, [&] { return train_here(c, args, dist, id); });
  const EndEvent end = train_here(c, args, dist, id);
  if (end.status == "failed") throw Error("training failed: " + end.error);
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "train a model (on the default corpus and the nano preset by default)");
  args->config.add_to(*cmd);
  cmd->add_option("--db", args->db, "run store (default: $XDG_DATA_HOME/tokamak/runs.db)");
  cmd->add_option("--name", args->name, "run name (default: derived from the model and switches)");
  cmd->add_flag("--json", args->json, "one JSON object per event on stdout; human output on stderr");
  cmd->add_flag("--no-store", args->no_store, "do not record the run in the run store");
  cmd->add_flag(
      "--control", args->control,
      "read control lines on stdin: pause, resume, stop (end of input stops the run); how the studio drives it");
  cmd->add_flag("--detach", args->detach,
                "start the run in a session of its own and return at once, printing its uid and run folder "
                "(--json: one object); follow it with `tokamak runs follow UID`");
  cmd->add_option("--gpus", args->gpus,
                  "data-parallel processes (dist.gpus): one per GPU, or Gloo processes on CPU; under torchrun/srun "
                  "their WORLD_SIZE is used");
  cmd->add_option("--halt-at-step", args->halt_at_step,
                  "end the run as stopped after this step, with a checkpoint, the schedule still that of "
                  "train.steps (a sweep's rung: resuming from that checkpoint continues the same curve bit-exact)");
  cmd->add_option("--kernels", args->kernels_given,
                  "profile the steps after the first, up to " + std::to_string(kTrainKernelSteps) +
                      ", with LibTorch's profiler; after the run, print their N costliest kernels (CUDA) or "
                      "operators (CPU) and each kind of work against its floor under the machine's limits, and "
                      "store the kinds with the run (profiled steps run a little slower)")
      ->type_name("N");
  cmd->callback([args, cmd] {
    // A bad N is refused before anything runs.
    args->kernels = kernels_to_list(args->kernels_given, cmd->count("--kernels") > 0);
    run_train(*args);
  });
}

}  // namespace tokamak::cli
