// The queue of this computer, kept in the run store (schema version 5): each queued run is a row holding its
// whole resolved config and its target, so the queue outlives the studio and the command that filled it; a
// worker (engine/fleet/queue/queue_worker.h) works it. Rows keep their order by `position` among the queued ones.
//
// States: queued (waiting) → running (a run uid and folder are set in the same transaction that claims the
// row, before any process starts) → done | failed | stopped (the run was stopped, by a person or by a sweep's
// early stopping at a rung: its checkpoint is kept) ; queued → removed. A sweep may put a stopped row back to
// queued (promoted at a rung: it resumes from its checkpoint; engine/fleet/queue/sweep_store.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tokamak {

class RunStore;

struct QueueItem {
  int64_t id = 0;
  int64_t position = 0;
  std::string state;             // queued | running | done | failed | stopped | removed
  std::string target = "local";  // where it trains; only this computer is implemented
  std::string name;              // the run's name (fixed when queued, so its folder is known before it starts)
  std::string config_json;       // the full config it trains with
  std::string run_uid, folder;   // set when first claimed; a promoted trial keeps both (it is the same run)
  std::string error;             // failed: why, in one line
  double created = 0, started = 0, ended = 0;
  int64_t sweep_id = 0;   // 0 = not part of a sweep
  int64_t point = 0;      // the sweep's point index
  int64_t rung = 0;       // the rung this segment stops at (early stopping); see halt_step
  int64_t halt_step = 0;  // stop (with a checkpoint) after this step; 0 = train to the end
  std::string resume;     // a checkpoint this segment resumes from ("" = from scratch)
  int64_t requeues = 0;   // times the queue's worker ended it after a stall and queued it again (store schema 10)
};

class RunQueue {
 public:
  explicit RunQueue(RunStore& store);

  // Appends a row in state queued at the end of the queue; returns its id. Call inside a transaction to add
  // several at once (a sweep: all or none).
  int64_t add(const QueueItem& item);
  // Every row (removed ones only when asked), queued first in order, then the others newest first.
  std::vector<QueueItem> list(bool with_removed = false);
  QueueItem item(int64_t id);  // throws "no queue item N" with the hint to list them
  // queued → removed. A running row is refused with the command that stops its run.
  void remove(int64_t id);
  // Moves a queued row to index `to` (0 = next) among the queued rows; the others keep their order.
  void move(int64_t id, int64_t to);
  bool paused();
  void set_paused(bool paused);
  // How many runs the worker keeps going at once (1 by default).
  int64_t parallel();
  void set_parallel(int64_t n);
  // GPUs of its own for each `cuda` run (engine/fleet/queue/gpu_slots.h): 1 by default, 0 = off.
  int64_t gpus_per_run();
  void set_gpus_per_run(int64_t n);
  // The GPUs the worker hands out, "0,1,3" ("" = every GPU of the machine); checked by parse_gpu_list.
  std::string gpus();
  void set_gpus(const std::string& list);

  // --- for the worker (each its own transaction) ---
  // The first queued row, or none.
  std::optional<QueueItem> next_queued();
  // queued → running with its uid and folder (claimed before any process starts; see queue_worker.h).
  void claim(int64_t id, const std::string& run_uid, const std::string& folder, double now);
  // `from` (running, or queued for a row that can never start) → done | failed | stopped; false, changing
  // nothing, when the row is in another state (another settler, or a promotion, came first).
  bool finish(int64_t id, const std::string& state, const std::string& error, double now,
              const std::string& from = "running");
  std::vector<QueueItem> in_state(const std::string& state);
  // running → queued at the front, to resume from RESUME ("" = from scratch) as the same run (its uid and folder
  // kept), WHY in its error column; false, changing nothing, when the row is no longer running.
  bool requeue(int64_t id, const std::string& resume, const std::string& why);
  // The store the rows live in: several steps that must land together share one of its transactions.
  RunStore& store() const { return store_; }

 private:
  RunStore& store_;
};

}  // namespace tokamak
