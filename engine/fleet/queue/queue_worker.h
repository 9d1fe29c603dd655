// The worker of this computer's queue (engine/fleet/queue/run_queue.h): one process per run store (a lock on
// DB.queue-lock), outliving whoever started it, that starts queued runs detached (as `train --detach` does)
// up to the queue's `parallel`, notes how each ended, and for a sweep with early stopping records each
// trial's metric at its rung and promotes the best (engine/fleet/queue/asha.h), which resume from their checkpoint.
//
// Killed at any moment (SIGKILL included), a new worker picks up where it was: a row is claimed (running, with
// its uid and folder) before its process starts, and the process writes its pid file before it runs
// (run_launch.h), so "running, no pid file" means "not started": started again with the same uid; a live
// pid is only watched, never started twice.
#pragma once
#include <functional>
#include <string>

namespace tokamak {

struct QueueWorkerOptions {
  std::string db;      // the run store ("" = the default), passed on to the runs
  std::string engine;  // tokamak-engine ("" = beside this program)
  double poll_s = 0.5;
  std::function<void(const std::string&)> note;  // one line per thing done
  // Whether the run in a folder still has a process, after the stall's SIGKILL (unset: run_process_alive). Tests set
  // it: a process that outlives SIGKILL (uninterruptible sleep in a hung driver) cannot be staged.
  std::function<bool(const std::string& run_folder)> process_alive;
  // Asked between passes whether to end now, leaving its runs going (unset: never). Tests stage with it a worker
  // that ends mid-way, as one killed or restarted would.
  std::function<bool()> should_leave;
};

// Works the queue until nothing is queued (or the queue is paused) and no run it started is going. Returns
// false at once when another worker holds the store's queue lock.
bool work_queue(const QueueWorkerOptions& options);

// Whether a worker holds the queue lock of this store now, and its pid (0 when none).
long queue_worker_pid(const std::string& db);

// Starts `PROGRAM queue work --db DB` as a session of its own (stdout/stderr to data_dir()/queue-worker.log)
// unless a worker holds the lock. PROGRAM is this program (/proc/self/exe): `tokamak`.
void ensure_queue_worker(const std::string& db);

}  // namespace tokamak
