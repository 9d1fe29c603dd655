// StoreSink: records a run into the run store without slowing the trainer. The trainer's on_* calls only
// append to a queue under a mutex (well under a microsecond); a writer thread commits the queue in one
// transaction about once a second (at once on start, checkpoint and end) and beats the run's heartbeat, so
// other connections see the run's rows while it trains and a killed run loses at most the last second.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "engine/base/run/events.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"

namespace tokamak {

struct StoreSinkOptions {
  double commit_interval_s = 1.0;  // how much history a SIGKILL can cost, against one fsync-free commit
  StoreOptions store;
};

class StoreSink : public EventSink {
 public:
  // Opens (or creates) the database now, so a bad path fails before training starts. Empty = default path.
  explicit StoreSink(const std::string& db_path = {}, StoreSinkOptions options = {});
  // Commits what is queued. A run that never reported its end is marked crashed.
  ~StoreSink() override;

  // Waits until the run's row is written: a store that cannot record throws here, before step 1.
  void on_start(const RunStart& e) override;
  void on_step(const StepEvent& e) override;
  void on_eval(const EvalEvent& e) override;
  void on_sample(const SampleEvent& e) override;
  void on_checkpoint(const CheckpointEvent& e) override;
  // A rollback: the rows after the checkpoint it went back to are dropped (they are trained again).
  void on_spike(const SpikeEvent& e) override;
  // Waits for the final commit, so the process may exit right after.
  void on_end(const EndEvent& e) override;

  // Blocks until everything queued so far has been tried in a commit.
  void flush();
  // The id of the run being recorded (0 before on_start).
  int64_t run_id() const;
  // The last write failure, if the last commit failed (the batch is kept and retried).
  std::optional<Error> error() const;
  const std::string& path() const { return path_; }

 private:
  using Item = std::variant<RunStart, StepEvent, EvalEvent, SampleEvent, CheckpointEvent, SpikeEvent, EndEvent>;
  void enqueue(Item item, bool urgent);
  void writer_loop();
  void commit(const std::vector<Item>& batch, bool closing);

  std::string path_;
  StoreSinkOptions options_;
  RunStore store_;  // used only by the writer thread after construction

  mutable std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<Item> queue_;
  uint64_t enqueued_ = 0, processed_ = 0;
  bool urgent_ = false, stopping_ = false;
  bool abandoned_ = false;  // the start was refused: nothing of this run is written
  std::optional<Error> start_error_;  // why (kept: a later empty batch clears error_)
  std::optional<Error> error_;
  int64_t run_id_ = 0;  // written by the writer under mu_

  // Writer-thread state, saved and restored around a commit that fails.
  struct RunState {
    int64_t id = 0;
    bool running = false;
    double wall_offset = 0;
  } state_;
  std::thread writer_;
};

}  // namespace tokamak
