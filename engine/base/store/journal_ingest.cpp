// JournalIngest (see journal_ingest.h).
#include "engine/base/store/journal_ingest.h"

#include <map>

#include "engine/base/run/journal_events.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"

namespace tokamak {
namespace {

// One transaction's events → store rows, merged by step as StoreSink merges them.
class IngestSink : public EventSink {
 public:
  IngestSink(RunStore& store, const std::string& remote, int64_t* run, double* wall, std::string* ended)
      : store_(store), remote_(remote), run_(run), wall_(wall), ended_(ended), now_(now_seconds()) {}

  void on_start(const RunStart& e) override {
    write_rows();
    *run_ = store_.begin_run(e, now_, 0);  // no pid: the process is on another machine
    *wall_ = e.start_step > 0 ? store_.wall_offset(*run_) : 0.0;
    Stmt u(store_.db(), "UPDATE runs SET remote = ?, journal_wall = ? WHERE id = ?");
    u.bind(1, remote_).bind(2, *wall_).bind(3, *run_).run();
    ended_->clear();
  }
  void on_step(const StepEvent& e) override { add(e.step, e.tokens, e.wall_s, e.metrics); }
  void on_eval(const EvalEvent& e) override { add(e.step, e.tokens, e.wall_s, e.metrics); }
  void on_sample(const SampleEvent& e) override {
    if (*run_) store_.add_sample(*run_, {e.step, e.prompt, e.text, now_});
  }
  void on_checkpoint(const CheckpointEvent& e) override {
    if (*run_) store_.add_checkpoint(*run_, {e.step, e.path, now_});
  }
  void on_spike(const SpikeEvent& e) override {
    if (e.action != "rolled back" || !*run_) return;
    write_rows();
    store_.forget_after(*run_, e.to_step);
  }
  void on_end(const EndEvent& e) override {
    write_rows();
    if (*run_) store_.end_run(*run_, e.status, e.error, now_);
    *ended_ = e.status;
  }
  void write_rows() {
    if (*run_ && !rows_.empty()) store_.add_metrics(*run_, rows_);
    rows_.clear(), at_.clear();
  }

 private:
  void add(int64_t step, int64_t tokens, double wall_s, const Metrics& metrics) {
    if (!*run_) return;
    auto it = at_.find(step);
    if (it == at_.end()) it = at_.emplace(step, rows_.size()).first, rows_.emplace_back().step = step;
    MetricRow& r = rows_[it->second];
    r.set("tokens", static_cast<double>(tokens), true);
    r.set("wall_s", wall_s + *wall_);
    // The one rename StoreSink makes too: the step's "loss" is the store's train_loss.
    for (const MetricValue& v : metrics) r.set(v.key == "loss" ? "train_loss" : v.key, v.value, v.integer);
  }

  RunStore& store_;
  const std::string& remote_;
  int64_t* run_;
  double* wall_;
  std::string* ended_;
  double now_;
  std::vector<MetricRow> rows_;
  std::map<int64_t, size_t> at_;
};

}  // namespace

JournalIngest::JournalIngest(RunStore& store, std::string uid, std::string remote)
    : store_(store), uid_(std::move(uid)), remote_(std::move(remote)) {
  run_ = store_.find_uid(uid_);
  if (run_ == 0) return;
  Stmt s(store_.db(), "SELECT journal_offset, journal_wall, status FROM runs WHERE id = ?");
  s.bind(1, run_);
  if (s.step()) {
    offset_ = static_cast<uint64_t>(s.int64(0)), wall_offset_ = s.real(1);
    const std::string status = s.text(2);
    if (status != "running") ended_ = status;
  }
}

int JournalIngest::ingest(const std::vector<JournalLine>& lines) {
  int taken = 0;
  int64_t run = run_;
  double wall = wall_offset_;
  std::string ended = ended_;
  uint64_t offset = offset_;
  store_.transaction([&] {
    IngestSink sink(store_, remote_, &run, &wall, &ended);
    for (const JournalLine& l : lines) {
      if (l.end <= offset) continue;  // recorded by an earlier read
      dispatch_journal_line(l.text, sink);
      offset = l.end, ++taken;
    }
    sink.write_rows();
    if (run != 0) {
      Stmt u(store_.db(), "UPDATE runs SET journal_offset = ?, heartbeat = ? WHERE id = ?");
      u.bind(1, static_cast<int64_t>(offset)).bind(2, now_seconds()).bind(3, run).run();
    } else {
      offset = offset_;  // nothing recorded yet (no start): read these lines again next time
    }
  });
  // Only a committed transaction moves the reader on.
  run_ = run, wall_offset_ = wall, ended_ = ended, offset_ = offset;
  return taken;
}

std::string run_remote(RunStore& store, int64_t run_id) {
  Stmt s(store.db(), "SELECT remote FROM runs WHERE id = ?");
  s.bind(1, run_id);
  return s.step() ? s.text(0) : std::string();
}

}  // namespace tokamak
