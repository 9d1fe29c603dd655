// settle_ended_run (see sweep_settle.h).
#include "engine/fleet/queue/sweep_settle.h"

#include <nlohmann/json.hpp>

#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"

namespace tokamak {

SegmentEnd read_segment_end(const RunFolder& f) {
  SegmentEnd e;
  if (!path_exists(f.journal())) return e;
  const std::string journal = read_file(f.journal());
  size_t at = 0;
  while (at < journal.size()) {
    const size_t end = journal.find('\n', at);
    if (end == std::string::npos) break;
    const nlohmann::json j = nlohmann::json::parse(journal.begin() + at, journal.begin() + end, nullptr, false);
    at = end + 1;
    if (!j.is_object()) continue;
    const std::string event = j.value("event", "");
    if (event == "end") e.step = j.value("step", int64_t{-1});
    if (event == "checkpoint") e.checkpoint = j.value("path", "");
  }
  return e;
}

bool settle_ended_run(RunQueue& queue, SweepStore& sweeps, const QueueItem& seen, std::string* what) {
  bool settled = false;
  // One transaction: the row's new state and its rung land together (a kill between them lost the rung), and
  // it holds the store's write lock, so concurrent advancers settle one at a time.
  queue.store().transaction([&] {
    // `seen` may be a snapshot from before another advancer's writes; the row as it is now decides. A row that
    // was settled, or promoted and started again (its next rung), is not this segment's to settle.
    const QueueItem q = queue.item(seen.id);
    if (q.state != "running" || q.rung != seen.rung || q.run_uid != seen.run_uid || q.folder != seen.folder) return;
    const RunFolder f{q.folder};
    const RunState s = read_run_state(f);
    if (s.state == "queued" || s.state == "running" || s.state == "paused") return;
    const SegmentEnd end = read_segment_end(f);
    const std::string journal = path_exists(f.journal()) ? read_file(f.journal()) : "";
    if (s.state == "stopped" && q.sweep_id > 0 && q.halt_step > 0 && end.step == q.halt_step) {
      queue.finish(q.id, "stopped", "", now_seconds());  // at its rung, checkpoint kept: may be promoted
      sweeps.record_rung(q, journal, end.step, end.checkpoint);
      if (what) *what = "reached its rung at step " + std::to_string(end.step);
      settled = true;
      return;
    }
    const bool ok = s.state == "finished";
    queue.finish(q.id, ok ? "done" : s.state == "stopped" ? "stopped" : "failed", ok ? "" : s.error, now_seconds());
    if (q.sweep_id > 0) {
      if (ok) sweeps.record_final(q, journal);
      else sweeps.record_failure(q, end.step);
    }
    if (what) *what = s.state + (s.error.empty() ? "" : ": " + s.error);
    settled = true;
  });
  return settled;
}

}  // namespace tokamak
