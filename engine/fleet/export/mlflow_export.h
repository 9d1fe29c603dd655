// Runs logged to an MLflow tracking server through its REST API (`tokamak runs export --to mlflow URL`), so they
// sit beside a team's other experiments whatever store the server keeps (MLflow 3.7 made SQLite its default; the
// ./mlruns file store is in maintenance): nothing is written here. For each run, in the experiment named (created
// when missing):
//   - an MLflow run named as the Tokamak run, tagged tokamak.run_uid, tokamak.version, tokamak.status, ended with
//     the run's status (finished: FINISHED; failed or crashed: FAILED; stopped: KILLED) and times;
//   - every config key as a param (flattened, "train.steps"), and the model, dataset and device;
//   - every stored metric point as a metric with its step and timestamp (run start + wall_s), in batches of 1000;
//   - config.json and samples.json as artifacts, through the server's artifact proxy (mlflow server serves
//     artifacts by default; a server that does not is said in one line, and the rest is still logged).
// A run already logged there (the same tokamak.run_uid in the experiment) is refused without --force, which logs it
// again as a new MLflow run. Errors are one line naming the server (never a token) and what the server said.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tokamak {

class RunStore;

struct MlflowOptions {
  std::string url;                     // http(s)://host:port of the tracking server
  std::string experiment = "tokamak";  // created when missing
  bool force = false;                  // log a run that is already there again, as a new MLflow run
  std::string token;                   // "" or a bearer token ($MLFLOW_TRACKING_TOKEN)
};

struct MlflowRun {
  std::string uid, run_id, experiment_id;
  int64_t params = 0, metrics = 0, artifacts = 0;
  std::string note;  // "" or why something was left out (artifacts the server does not serve)
};

// IDS empty: every run. PROGRESS, when given, gets a line per run as it is logged.
std::vector<MlflowRun> export_mlflow(RunStore& store, const std::vector<int64_t>& ids, const MlflowOptions& options,
                                     const std::function<void(const std::string&)>& progress = {});

}  // namespace tokamak
