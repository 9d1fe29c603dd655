// How a sweep trial's segment ended, read from its run folder and written into the run store: the one place
// that turns "the run stopped at step 25 with a checkpoint" into "rung 0 reached, metric 6.2", shared by the
// queue worker (engine/fleet/queue/queue_worker.h), `tokamak sweep status` and a Slurm task's `tokamak sweep advance`.
#pragma once
#include <string>

#include "engine/fleet/queue/run_queue.h"

namespace tokamak {

class SweepStore;
struct RunFolder;

// The end event's step and the checkpoint written at that step, from the last segment of a run's journal.
struct SegmentEnd {
  int64_t step = -1;
  std::string checkpoint;
};
SegmentEnd read_segment_end(const RunFolder& f);

// A running row whose run has ended: the row finished (stopped at its rung, done, stopped, failed) and, for a
// sweep's trial, its rung, final result or failure recorded, in one transaction. Returns false, changing
// nothing, while the run is still queued, running or paused, or when the row is no longer the running segment
// `q` saw (another advancer settled it, or it was promoted and started again). `what` (when given) gets one line
// saying what it found.
bool settle_ended_run(RunQueue& queue, SweepStore& sweeps, const QueueItem& q, std::string* what = nullptr);

}  // namespace tokamak
