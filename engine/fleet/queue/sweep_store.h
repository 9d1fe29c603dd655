// Sweeps in the run store (schema version 5): a sweep's plan queued as trials (queue rows), what each trial
// reached at each rung, and ASHA's promotions decided from those rows — so any worker, after any crash, takes
// the same decisions from the store alone.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep.h"

namespace tokamak {

class RunStore;

// A stopped trial put back in the queue: it resumes from `resume` and stops at halt_step (0 = the end).
struct Promotion {
  int64_t queue_id = 0, rung = 0, halt_step = 0;
  std::string resume;
};

struct RungRow {
  int64_t rung = 0, step = 0;
  double metric = 0, val_loss = 0;  // NaN when not recorded (failed, diverged)
  bool promoted = false;
};

struct SweepTrialStatus {
  QueueItem item;
  std::vector<RungRow> rungs;  // in rung order; the last rung is the end of training (train.steps)
};

struct SweepStatus {
  int64_t id = 0;
  std::string name, metric;
  std::string spec_json;  // the sweep file as read
  bool maximize = false;
  AshaSpec asha;
  double created = 0;
  std::vector<SweepTrialStatus> trials;  // by point
};

class SweepStore {
 public:
  explicit SweepStore(RunStore& store);

  // Records the sweep and queues every trial in one transaction (all or none); returns the sweep's id.
  // submitted: trials already handed to a scheduler (Slurm), each its (uid, folder): their rows are running
  // from the start, and the local worker leaves rows whose target is not "local" alone.
  int64_t queue_plan(const SweepPlan& plan, const std::string& target,
                     const std::vector<std::pair<std::string, std::string>>* submitted = nullptr);
  // The trial's segment ended where it was asked to stop (its rung): its metric there and its checkpoint.
  void record_rung(const QueueItem& q, const std::string& journal, int64_t step, const std::string& checkpoint);
  // The trial trained to train.steps: its final result, at the rung after the last.
  void record_final(const QueueItem& q, const std::string& journal);
  // The trial failed (diverged, crashed): NaN at the rung it was heading for, so it ranks last there.
  void record_failure(const QueueItem& q, int64_t step);
  // ASHA's promotions now: each marked at its rung and its row put back at the head of the queue (to resume
  // from its checkpoint) in one transaction, and returned. Idempotent: what was decided is not decided again.
  std::vector<Promotion> promotions(int64_t sweep_id);

  std::vector<int64_t> sweep_ids();
  SweepStatus status(int64_t sweep_id);  // throws "no sweep N" with the hint to list them

 private:
  void put_rung(int64_t queue_id, int64_t rung, int64_t step, double metric, double val_loss,
                const std::string& checkpoint);
  RunStore& store_;
};

}  // namespace tokamak
