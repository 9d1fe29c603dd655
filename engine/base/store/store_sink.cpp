// The run store's event sink: a queue filled by the trainer and a writer thread that drains it in batches.
#include "engine/base/store/store_sink.h"

#include <algorithm>

#include <unistd.h>

#include <chrono>
#include <map>

namespace tokamak {

StoreSink::StoreSink(const std::string& db_path, StoreSinkOptions options)
    : path_(db_path.empty() ? default_db_path() : db_path), options_(options),
      store_(path_, RunStore::Mode::create, options.store) {
  writer_ = std::thread([this] { writer_loop(); });
}

StoreSink::~StoreSink() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void StoreSink::enqueue(Item item, bool urgent) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(std::move(item));
    ++enqueued_;
    if (!urgent) return;
    urgent_ = true;
  }
  wake_.notify_one();
}

void StoreSink::on_start(const RunStart& e) {
  enqueue(e, true);
  flush();
  std::lock_guard<std::mutex> lk(mu_);
  if (start_error_) throw *start_error_;  // the writer dropped the start (writer_loop)
}

void StoreSink::on_step(const StepEvent& e) { enqueue(e, false); }
void StoreSink::on_eval(const EvalEvent& e) { enqueue(e, false); }
void StoreSink::on_sample(const SampleEvent& e) { enqueue(e, false); }
void StoreSink::on_checkpoint(const CheckpointEvent& e) { enqueue(e, true); }
void StoreSink::on_spike(const SpikeEvent& e) {
  if (e.action == "rolled back") enqueue(e, false);
}

void StoreSink::on_end(const EndEvent& e) {
  enqueue(e, true);
  flush();
}

void StoreSink::flush() {
  std::unique_lock<std::mutex> lk(mu_);
  uint64_t target = enqueued_;
  urgent_ = true;
  wake_.notify_one();
  done_.wait(lk, [&] { return processed_ >= target; });
}

int64_t StoreSink::run_id() const {
  std::lock_guard<std::mutex> lk(mu_);
  return run_id_;
}

std::optional<Error> StoreSink::error() const {
  std::lock_guard<std::mutex> lk(mu_);
  return error_;
}

void StoreSink::writer_loop() {
  using clock = std::chrono::steady_clock;
  const auto interval =
      std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(options_.commit_interval_s));
  std::vector<Item> pending;  // a failed batch stays here and goes out with the next one
  auto deadline = clock::now() + interval;
  for (;;) {
    bool closing;
    uint64_t taken;
    {
      std::unique_lock<std::mutex> lk(mu_);
      wake_.wait_until(lk, deadline, [&] { return urgent_ || stopping_; });
      // A swap keeps the trainer's enqueue from waiting on a copy; both buffers keep their capacity.
      if (pending.empty()) pending.swap(queue_);
      else
        for (auto& item : queue_) pending.push_back(std::move(item));
      queue_.clear();
      if (abandoned_) pending.clear();  // events of a run whose start was refused
      urgent_ = false;
      closing = stopping_;
      taken = enqueued_;
    }
    if (clock::now() >= deadline) deadline = clock::now() + interval;
    RunState saved = state_;
    std::optional<Error> failure;
    try {
      commit(pending, closing);
      pending.clear();
    } catch (const Error& e) {
      state_ = saved;
      failure = e;
    } catch (const std::exception& e) {
      state_ = saved;
      failure = Error(std::string("run store: ") + e.what(), "");
    } catch (...) {  // this is the writer's thread: nothing may leave it
      state_ = saved;
      failure = Error("run store: an unknown error while writing", "");
    }
    // A start that failed (the store stayed locked) is refused to the trainer by on_start: it is dropped here, not
    // tried again with the next batch, where it would record a run the user was told did not start.
    const bool start_failed =
        failure && state_.id == 0 &&
        std::any_of(pending.begin(), pending.end(), [](const Item& i) { return std::holds_alternative<RunStart>(i); });
    if (start_failed) pending.clear();
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (start_failed) abandoned_ = true, start_error_ = failure;
      processed_ = taken;
      error_ = failure;
      run_id_ = state_.id;
    }
    done_.notify_all();
    if (closing) return;
  }
}

// A step's axes and every metric it carries, whatever their names. The one rename: the step's loss is
// "loss" on the wire (--json) and was the column train_loss before metrics had names; the store keeps
// that name so old and new runs, and their exports, agree.
static void add_values(MetricRow& r, int64_t tokens, double wall_s, const Metrics& metrics) {
  r.set("tokens", static_cast<double>(tokens), true);
  r.set("wall_s", wall_s);
  for (const MetricValue& v : metrics) r.set(v.key == "loss" ? "train_loss" : v.key, v.value, v.integer);
}

void StoreSink::commit(const std::vector<Item>& batch, bool closing) {
  if (batch.empty() && !state_.running) return;
  const double now = now_seconds();
  store_.transaction([&] {
    // Rows of one batch are merged by step (an eval lands in its step's row) and written together.
    std::vector<MetricRow> rows;
    std::map<int64_t, size_t> at;
    auto row = [&](int64_t step) -> MetricRow& {
      auto it = at.find(step);
      if (it != at.end()) return rows[it->second];
      at[step] = rows.size();
      rows.emplace_back().step = step;
      return rows.back();
    };
    auto write_rows = [&] {
      if (state_.id != 0) store_.add_metrics(state_.id, rows);
      rows.clear();
      at.clear();
    };
    for (const Item& item : batch) {
      if (auto* st = std::get_if<RunStart>(&item)) {
        write_rows();
        state_.id = store_.begin_run(*st, now, ::getpid());
        state_.running = true;
        state_.wall_offset = st->start_step > 0 ? store_.wall_offset(state_.id) : 0.0;
      } else if (state_.id == 0) {
        continue;  // events before any start have no run to go to
      } else if (auto* s = std::get_if<StepEvent>(&item)) {
        add_values(row(s->step), s->tokens, s->wall_s + state_.wall_offset, s->metrics);
      } else if (auto* e = std::get_if<EvalEvent>(&item)) {
        add_values(row(e->step), e->tokens, e->wall_s + state_.wall_offset, e->metrics);
      } else if (auto* sm = std::get_if<SampleEvent>(&item)) {
        store_.add_sample(state_.id, {sm->step, sm->prompt, sm->text, now});
      } else if (auto* c = std::get_if<CheckpointEvent>(&item)) {
        store_.add_checkpoint(state_.id, {c->step, c->path, now});
      } else if (auto* sp = std::get_if<SpikeEvent>(&item)) {
        write_rows();
        store_.forget_after(state_.id, sp->to_step);
      } else if (auto* end = std::get_if<EndEvent>(&item)) {
        write_rows();
        store_.end_run(state_.id, end->status, end->error, now);
        state_.running = false;
      }
    }
    write_rows();
    if (state_.running && closing) {
      store_.end_run(state_.id, "crashed", "the trainer stopped without reporting the run's end", now);
      state_.running = false;
    } else if (state_.running) {
      store_.heartbeat(state_.id, now);
    }
  });
}

}  // namespace tokamak
