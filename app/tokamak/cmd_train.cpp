// `tokamak train`: one training run from the command line. Ctrl-C stops cleanly (with a checkpoint);
// a second Ctrl-C ends the process at once.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <thread>

#include "app/tokamak/commands.h"
#include "app/tokamak/config_args.h"
#include "app/tokamak/printer.h"
#include "engine/config/config_table.h"
#include "engine/store/store_sink.h"
#include "engine/train/device.h"
#include "engine/train/trainer.h"
#include "engine/util/error.h"

namespace tokamak::cli {
namespace {

TrainControl* g_control = nullptr;

void on_interrupt(int) {
  if (g_control) g_control->stop.store(true);
  std::signal(SIGINT, SIG_DFL);
}

struct TrainArgs {
  ConfigArgs config;
  std::string db;
  std::string name;
  bool json = false;
  bool no_store = false;
};

int run_train(const TrainArgs& args) {
  Config c = args.config.resolve();
  if (!args.name.empty()) c.name = args.name;
  validate_config(c, cuda_device_count());
  std::vector<std::pair<std::string, std::string>> derived = {
      {"threads", std::to_string(c.threads > 0 ? c.threads : std::thread::hardware_concurrency())},
      {"device name", device_name(parse_device(c.device))}};
  std::fputs(format_config_table(c, derived).c_str(), stderr);

  PrinterSink printer(args.json);
  FanOutSink sinks;
  sinks.add(&printer);
  // Opened before training so that a database that cannot be written fails before step 1.
  std::unique_ptr<StoreSink> store;
  if (!args.no_store) {
    store = std::make_unique<StoreSink>(args.db);
    sinks.add(store.get());
  }
  TrainControl control;
  g_control = &control;
  std::signal(SIGINT, on_interrupt);
  EndEvent end = train(c, sinks, &control);
  g_control = nullptr;
  if (store) {
    store->flush();
    if (auto error = store->error()) std::fprintf(stderr, "tokamak: the run store could not record everything: %s\n", error->what());
    else std::fprintf(stderr, "recorded as run %lld in %s\n", static_cast<long long>(store->run_id()), store->path().c_str());
  }
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
  cmd->callback([args] { run_train(*args); });
}

}  // namespace tokamak::cli
