// SweepStore (see sweep_store.h).
#include "engine/fleet/queue/sweep_store.h"

#include <cmath>
#include <limits>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/error.h"

namespace tokamak {

static int64_t steps_of(const QueueItem& q) { return config_from_json(q.config_json).train.steps; }

SweepStore::SweepStore(RunStore& store) : store_(store) {}

int64_t SweepStore::queue_plan(const SweepPlan& plan, const std::string& target,
                               const std::vector<std::pair<std::string, std::string>>* submitted) {
  int64_t id = 0;
  store_.transaction([&] {
    Stmt s(store_.db(),
           "INSERT INTO sweeps (name, spec_json, metric, maximize, min_steps, eta, created) VALUES (?,?,?,?,?,?,?)");
    s.bind(1, plan.name).bind(2, plan.spec_json).bind(3, plan.metric.name).bind(4, int64_t{plan.metric.maximize});
    s.bind(5, plan.asha.min_steps).bind(6, plan.asha.eta).bind(7, now_seconds()).run();
    id = store_.db().last_insert_id();
    RunQueue queue(store_);
    for (const SweepTrial& t : plan.trials) {
      QueueItem q;
      q.target = target, q.name = t.name, q.config_json = config_to_json(t.config, -1);
      q.sweep_id = id, q.point = t.point, q.rung = 0;
      const std::vector<int64_t> rungs = asha_rungs(plan.asha, t.config.train.steps);
      q.halt_step = rungs.empty() ? 0 : rungs.front();
      const int64_t row = queue.add(q);
      if (!submitted) continue;
      const auto& [uid, folder] = submitted->at(static_cast<size_t>(t.point));
      Stmt run(store_.db(), "UPDATE queue SET state = 'running', run_uid = ?, folder = ?, started = ? WHERE id = ?");
      run.bind(1, uid).bind(2, folder).bind(3, now_seconds()).bind(4, row).run();
    }
  });
  return id;
}

void SweepStore::put_rung(int64_t queue_id, int64_t rung, int64_t step, double metric, double val_loss,
                          const std::string& checkpoint) {
  store_.transaction([&] {
    Stmt s(store_.db(),
           "INSERT INTO sweep_rungs (queue_id, rung, step, metric, val_loss, checkpoint) VALUES (?,?,?,?,?,?) "
           "ON CONFLICT(queue_id, rung) DO UPDATE SET step = excluded.step, metric = excluded.metric, "
           "val_loss = excluded.val_loss, checkpoint = excluded.checkpoint");
    s.bind(1, queue_id).bind(2, rung).bind(3, step).bind(4, metric).bind(5, val_loss).bind(6, checkpoint).run();
  });
}

static SweepMetric metric_of(Db& db, int64_t sweep_id) {
  Stmt s(db, "SELECT metric, maximize FROM sweeps WHERE id = ?");
  s.bind(1, sweep_id);
  SweepMetric m;
  if (s.step()) m.name = s.text(0), m.maximize = s.int64(1) != 0;
  return m;
}

void SweepStore::record_rung(const QueueItem& q, const std::string& journal, int64_t step,
                             const std::string& checkpoint) {
  const TrialResult r = trial_metric(metric_of(store_.db(), q.sweep_id), journal, step);
  put_rung(q.id, q.rung, step, r.metric, r.val_loss, checkpoint);
}

void SweepStore::record_final(const QueueItem& q, const std::string& journal) {
  const TrialResult r = trial_metric(metric_of(store_.db(), q.sweep_id), journal, 0);
  put_rung(q.id, q.rung, steps_of(q), r.metric, r.val_loss, "");
}

void SweepStore::record_failure(const QueueItem& q, int64_t step) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  put_rung(q.id, q.rung, step > 0 ? step : (q.halt_step > 0 ? q.halt_step : steps_of(q)), nan, nan, "");
}

std::vector<Promotion> SweepStore::promotions(int64_t sweep_id) {
  std::vector<Promotion> out;
  store_.transaction([&] {
    Db& db = store_.db();
    AshaSpec asha;
    bool maximize = false;
    {
      Stmt s(db, "SELECT min_steps, eta, maximize FROM sweeps WHERE id = ?");
      s.bind(1, sweep_id);
      if (!s.step()) return;
      asha.min_steps = s.int64(0), asha.eta = s.int64(1), maximize = s.int64(2) != 0;
    }
    if (asha.min_steps <= 0) return;
    const int64_t top = db.query_int(
        "SELECT coalesce(max(r.rung), -1) FROM sweep_rungs r JOIN queue q ON q.id = "
        "r.queue_id WHERE q.sweep_id = " +
        std::to_string(sweep_id));
    const auto promote = [&](int64_t id, int64_t k) {
      const QueueItem q = RunQueue(store_).item(id);
      const std::vector<int64_t> rungs = asha_rungs(asha, steps_of(q));
      if (q.state != "stopped" || k >= static_cast<int64_t>(rungs.size())) return false;  // the end has no next rung
      Stmt c(db, "SELECT checkpoint FROM sweep_rungs WHERE queue_id = ? AND rung = ?");
      c.bind(1, id).bind(2, k);
      const std::string checkpoint = c.step() ? c.text(0) : "";
      Stmt m(db, "UPDATE sweep_rungs SET promoted = 1 WHERE queue_id = ? AND rung = ?");
      m.bind(1, id).bind(2, k).run();
      const int64_t next = k + 1 < static_cast<int64_t>(rungs.size()) ? rungs[static_cast<size_t>(k + 1)] : 0;
      // Back in the queue, first, in the same transaction as the decision: a worker killed now loses neither.
      const int64_t first = db.query_int("SELECT coalesce(min(position), 1) FROM queue WHERE state = 'queued'");
      Stmt u(db,
             "UPDATE queue SET state = 'queued', position = ?, rung = ?, halt_step = ?, resume = ?, ended = NULL "
             "WHERE id = ?");
      u.bind(1, first - 1).bind(2, k + 1).bind(3, next).bind(4, checkpoint).bind(5, id).run();
      out.push_back({id, k + 1, next, checkpoint});
      return true;
    };
    const auto results = [&](int64_t k) {
      std::vector<RungResult> rung;
      Stmt s(db,
             "SELECT r.queue_id, r.metric, r.val_loss, r.promoted FROM sweep_rungs r JOIN queue q ON q.id = "
             "r.queue_id WHERE q.sweep_id = ? AND r.rung = ? AND q.state != 'removed'");
      s.bind(1, sweep_id).bind(2, k);
      while (s.step()) {
        const double m = s.real(1);
        rung.push_back({s.int64(0), maximize && !std::isnan(m) ? -m : m, s.real(2), s.int64(3) != 0});
      }
      return rung;
    };
    // From the highest rung down, as ASHA prefers to carry a trial further over starting another.
    for (int64_t k = top; k >= 0; --k)
      for (int64_t id : asha_promotions(results(k), asha.eta)) promote(id, k);
    // With few trials the top rungs never hold η of them, and ASHA alone would end the sweep with nothing trained
    // to the end. When nothing is left to run and no trial has finished, the best trial of the highest rung
    // reached goes on (one at a time, until one finishes).
    const std::string sweep = std::to_string(sweep_id);
    if (!out.empty() ||
        db.query_int("SELECT count(*) FROM queue WHERE sweep_id = " + sweep + " AND state IN ('queued','running')") >
            0 ||
        db.query_int("SELECT count(*) FROM queue WHERE sweep_id = " + sweep + " AND state = 'done'") > 0)
      return;
    for (int64_t k = top; k >= 0; --k) {
      std::vector<RungResult> open;
      for (const RungResult& r : results(k))
        if (!r.promoted) open.push_back(r);
      bool done = false;
      for (int64_t id : asha_promotions(open, 1))  // every one in order, best first: the first that can go on
        if ((done = promote(id, k))) break;
      if (done) return;
    }
  });
  return out;
}

std::vector<int64_t> SweepStore::sweep_ids() {
  std::vector<int64_t> ids;
  Stmt s(store_.db(), "SELECT id FROM sweeps ORDER BY id");
  while (s.step()) ids.push_back(s.int64(0));
  return ids;
}

SweepStatus SweepStore::status(int64_t sweep_id) {
  Db& db = store_.db();
  SweepStatus st;
  {
    Stmt s(db, "SELECT id, name, metric, maximize, min_steps, eta, created, spec_json FROM sweeps WHERE id = ?");
    s.bind(1, sweep_id);
    if (!s.step())
      throw Error("no sweep " + std::to_string(sweep_id) + " in " + store_.path(),
                  "`tokamak sweep status` lists the sweeps");
    st.id = s.int64(0), st.name = s.text(1), st.metric = s.text(2), st.maximize = s.int64(3) != 0;
    st.asha.min_steps = s.int64(4), st.asha.eta = s.int64(5), st.created = s.real(6), st.spec_json = upgrade_sweep_text(s.text(7));
  }
  std::vector<int64_t> ids;
  {
    Stmt s(db, "SELECT id FROM queue WHERE sweep_id = ? ORDER BY point");
    s.bind(1, sweep_id);
    while (s.step()) ids.push_back(s.int64(0));
  }
  RunQueue queue(store_);
  for (int64_t id : ids) {
    SweepTrialStatus t;
    t.item = queue.item(id);
    Stmt r(db, "SELECT rung, step, metric, val_loss, promoted FROM sweep_rungs WHERE queue_id = ? ORDER BY rung");
    r.bind(1, id);
    while (r.step()) t.rungs.push_back({r.int64(0), r.int64(1), r.real(2), r.real(3), r.int64(4) != 0});
    st.trials.push_back(std::move(t));
  }
  return st;
}

}  // namespace tokamak
