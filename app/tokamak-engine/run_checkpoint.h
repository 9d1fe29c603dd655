// A stored run's checkpoint, for the commands that read one (`export`, `generate`): the run by id or uid in the run
// store, its checkpoint at a step or its newest, with one-line errors for a run without checkpoints, a step it never
// saved and a file that is gone.
#pragma once
#include <cstdint>
#include <string>

namespace tokamak::cli {

struct RunCheckpoint {
  std::string path, run_name, run_uid;
  int64_t run_id = 0, step = 0;
  std::string db;  // the store it came from, as opened
};

// step 0: the newest. db "": the default store.
RunCheckpoint run_checkpoint(const std::string& db, const std::string& run, int64_t step = 0);

}  // namespace tokamak::cli
