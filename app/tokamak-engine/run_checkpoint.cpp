// A stored run's checkpoint (see run_checkpoint.h).
#include "app/tokamak-engine/run_checkpoint.h"

#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak::cli {

RunCheckpoint run_checkpoint(const std::string& db, const std::string& run, int64_t step) {
  RunStore store(db, db.empty() ? RunStore::Mode::create : RunStore::Mode::existing);
  const int64_t id = store.resolve(run);
  const auto checkpoints = store.checkpoints(id);
  if (checkpoints.empty())
    throw Error("run " + run + " has no checkpoint", "train with checkpoint.every set, or pick another run");
  const CheckpointRow* pick = &checkpoints.back();
  if (step > 0) {
    pick = nullptr;
    std::string steps;
    for (const CheckpointRow& c : checkpoints) {
      if (c.step == step) pick = &c;
      steps += (steps.empty() ? "" : ", ") + std::to_string(c.step);
    }
    if (!pick)
      throw Error("run " + run + " has no checkpoint at step " + std::to_string(step), "its checkpoints: " + steps);
  }
  if (!path_exists(pick->path))
    throw Error("run " + run + "'s checkpoint '" + pick->path + "' is gone",
                "pick a run whose checkpoints are still on this machine");
  const RunInfo info = store.run(id);
  return {pick->path, info.name, info.uid, id, pick->step, store.path()};
}

}  // namespace tokamak::cli
