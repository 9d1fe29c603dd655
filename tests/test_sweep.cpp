// Sweeps and the queue's rows without any process: the planner (grid count and names, log spacing, random
// points reproducible from the sweep's seed, bad files refused in one line naming the key), ASHA's rungs and
// promotions, and the queue's order, reorder, removal and pause as the run store keeps them.
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <thread>

#include "engine/fleet/queue/asha.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep.h"
#include "engine/fleet/queue/sweep_settle.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/test_support.h"

using namespace tokamak;

namespace {

const char* kGrid = R"({
  "name": "lrs",
  "base": {"train": {"steps": 100}, "eval": {"every": 10}},
  "sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 4, "scale": "log"}, "optimizer.name": ["adamw", "muon"]},
  "seeds": [1, 2],
  "metric": "best_val_loss",
  "early_stopping": {"method": "asha", "min_steps": 10, "eta": 3}
})";

const char* kRandom = R"({
  "name": "r", "method": "random", "count": 6, "seed": %1,
  "sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-1, "scale": "log"}, "train.batch_size": {"min": 2, "max": 9},
            "schedule.name": ["cosine", "wsd"]}
})";

// A Slurm sweep of two trials, both submitted (running) and both ended at rung 0 with a checkpoint, as their
// run folders in `dir` say: trial 0 with val loss 3, trial 1 with 5. Returns the sweep's id.
int64_t ended_at_rung_zero(RunStore& store, const QTemporaryDir& dir) {
  const SweepPlan plan =
      plan_sweep(R"({"base": {"train": {"steps": 20}, "eval": {"every": 2}}, "sweep": {"optimizer.lr": [1, 2]},
                                       "early_stopping": {"min_steps": 2, "eta": 2}})",
                 "s.json", 0);
  std::vector<std::pair<std::string, std::string>> runs;
  for (int i = 0; i < 2; ++i) {
    const RunFolder f{dir.filePath(QString("trial%1").arg(i)).toStdString()};
    create_run_folder(f, {"uid" + std::to_string(i), plan.trials[size_t(i)].name, "here", f.path, 1.0});
    write_file_atomically(f.journal(),
                          "{\"event\":\"eval\",\"step\":2,\"val_loss\":" + std::to_string(3 + 2 * i) +
                              "}\n{\"event\":\"checkpoint\",\"step\":2,\"path\":\"" + f.path +
                              "/step_2.safetensors\"}\n{\"event\":\"end\",\"step\":2,\"status\":\"stopped\"}\n");
    write_file_atomically(f.exit_file(), "{\"status\":\"stopped\",\"code\":0,\"error\":\"\"}\n");
    runs.emplace_back("uid" + std::to_string(i), f.path);
  }
  return SweepStore(store).queue_plan(plan, "slurm", &runs);
}

std::vector<std::string> names_of(const SweepPlan& p) {
  std::vector<std::string> n;
  for (const SweepTrial& t : p.trials) n.push_back(t.name);
  return n;
}

}  // namespace

class TestSweep : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void gridExpandsEveryCombinationWithItsName() {
    const SweepPlan p = plan_sweep(kGrid, "grid.json", 0);
    QCOMPARE(p.trials.size(), size_t{4 * 2 * 2});  // 4 rates × 2 optimizers × 2 seeds
    QCOMPARE(p.keys, (std::vector<std::string>{"optimizer.lr", "optimizer.name", "train.seed"}));
    // The first key outermost, the seeds innermost; each name says its point and values.
    QCOMPARE(p.trials[0].name, std::string("lrs-p0-lr=0.0001-optimizer=adamw-seed=1"));
    QCOMPARE(p.trials[1].name, std::string("lrs-p1-lr=0.0001-optimizer=adamw-seed=2"));
    QCOMPARE(p.trials[2].name, std::string("lrs-p2-lr=0.0001-optimizer=muon-seed=1"));
    QCOMPARE(p.trials[15].name, std::string("lrs-p15-lr=0.01-optimizer=muon-seed=2"));
    const std::vector<std::string> names = names_of(p);
    QCOMPARE(std::set<std::string>(names.begin(), names.end()).size(), names.size());
    // Log spacing: each rate the same factor above the one before (here 100^(1/3)), the ends exact.
    const double r0 = p.trials[0].config.optimizer.lr, r1 = p.trials[4].config.optimizer.lr,
                 r2 = p.trials[8].config.optimizer.lr;
    QCOMPARE(r0, 1e-4);
    QVERIFY(std::abs(r1 / r0 - r2 / r1) < 1e-12);
    QVERIFY(std::abs(r1 / r0 - std::cbrt(100.0)) < 1e-12);
    QCOMPARE(p.trials[12].config.optimizer.lr, 1e-2);
    QCOMPARE(name_of(p.trials[2].config.optimizer.name), std::string("muon"));
    QCOMPARE(p.trials[1].config.train.seed, int64_t{2});
    // The base applies to every trial; the run's name is the trial's.
    QCOMPARE(p.trials[7].config.train.steps, int64_t{100});
    QCOMPARE(p.trials[7].config.name, p.trials[7].name);
    QCOMPARE(p.metric.name, std::string("best_val_loss"));
    QCOMPARE(asha_rungs(p.asha, 100), (std::vector<int64_t>{10, 30, 90}));
  }

  void randomPointsRepeatFromTheSweepSeed() {
    const SweepPlan a = plan_sweep(QString(kRandom).arg(7).toStdString(), "r.json", 0);
    const SweepPlan b = plan_sweep(QString(kRandom).arg(7).toStdString(), "r.json", 0);
    const SweepPlan c = plan_sweep(QString(kRandom).arg(8).toStdString(), "r.json", 0);
    QCOMPARE(a.trials.size(), size_t{6});
    QCOMPARE(names_of(a), names_of(b));
    for (size_t i = 0; i < a.trials.size(); ++i) {
      QCOMPARE(a.trials[i].config.optimizer.lr, b.trials[i].config.optimizer.lr);  // bit-equal, not close
      QVERIFY(a.trials[i].config.optimizer.lr >= 1e-4 && a.trials[i].config.optimizer.lr <= 1e-1);
      QVERIFY(a.trials[i].config.train.batch_size >= 2 && a.trials[i].config.train.batch_size <= 9);
    }
    QVERIFY(names_of(a) != names_of(c));
  }

  void badFilesAreRefusedInOneLineNamingTheKey_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("says");
    QTest::newRow("unknown key") << R"({"sweep": {"train.lrr": [1e-3]}})"
                                 << "bad.json: unknown config key 'train.lrr' (hint: did you mean 'optimizer.lr'?";
    QTest::newRow("refused value") << R"({"sweep": {"optimizer.lr": [1e-3, -1.0]}})"
                                   << "bad.json: trial 1 (optimizer.lr=-1): optimizer.lr must be in";
    QTest::newRow("wrong type") << R"({"sweep": {"train.steps": ["many"]}})"
                                << "bad.json: trial 0 (train.steps=many): config key 'train.steps' expects int";
    QTest::newRow("unknown base key") << R"({"base": {"trian": {"steps": 3}}, "sweep": {"optimizer.lr": [1]}})"
                                      << "bad.json: base: unknown config key 'trian.steps'";
    QTest::newRow("no sweep") << R"({"name": "x"})"
                              << "bad.json: no \"sweep\" object";
    QTest::newRow("bad range") << R"({"sweep": {"optimizer.lr": {"min": 0, "max": 1, "count": 3, "scale": "log"}}})"
                               << "bad.json: \"optimizer.lr\" is log-spaced from 0";
    QTest::newRow("rung off evals")
        << R"({"base": {"eval": {"every": 7}}, "sweep": {"optimizer.lr": [1e-3]}, "early_stopping": {"min_steps": 10}})"
        << "early_stopping.min_steps=10 is not a multiple of eval.every=7";
    QTest::newRow("resume") << R"({"sweep": {"checkpoint.resume": ["a"]}})"
                            << "bad.json: checkpoint.resume cannot be swept";
    // nlohmann kept the last of two equal keys without a word: half the file was silently not swept.
    QTest::newRow("duplicate key") << R"({"sweep": {"optimizer.lr": [1e-3], "optimizer.lr": [2e-3]}})"
                                   << "bad.json: \"optimizer.lr\" is given twice in one object";
    QTest::newRow("duplicate nested key")
        << R"({"base": {"train": {"steps": 5, "steps": 6}}, "sweep": {"optimizer.lr": [1]}})"
        << "bad.json: \"steps\" is given twice in one object";
    // Fields of the wrong type were nlohmann's "[json.exception.type_error.302] ..." with no file and no hint.
    QTest::newRow("name of wrong type") << R"({"name": 5, "sweep": {"optimizer.lr": [1e-3]}})"
                                        << "bad.json: \"name\" must be a string, got 5";
    QTest::newRow("scale of wrong type")
        << R"({"sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 2, "scale": 10}}})"
        << "bad.json: \"scale\" must be a string, got 10";
    QTest::newRow("min_steps of wrong type")
        << R"({"sweep": {"optimizer.lr": [1e-3]}, "early_stopping": {"min_steps": "10"}})"
        << "bad.json: early_stopping.min_steps must be an integer from 1 to 1000000000000, got \"10\"";
    QTest::newRow("eta past its bound") << R"({"sweep": {"optimizer.lr": [1e-3]}, "early_stopping": {"min_steps": 2,
                                              "eta": 5000000000000000000}})"
                                        << "bad.json: early_stopping.eta must be an integer from 2 to 1000";
    QTest::newRow("grid count past the cap")
        << R"({"sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 100000000}}})"
        << "bad.json: \"optimizer.lr\".count must be an integer from 1 to 10000, got 100000000";
    // JSON reads 0 as an unsigned number, and the lower bound was checked for signed ones only: an empty grid.
    QTest::newRow("grid count of zero") << R"({"sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 0}}})"
                                        << "bad.json: \"optimizer.lr\".count must be an integer from 1 to 10000, got 0";
    QTest::newRow("eta of zero")
        << R"({"sweep": {"optimizer.lr": [1e-3]}, "early_stopping": {"min_steps": 2, "eta": 0}})"
        << "bad.json: early_stopping.eta must be an integer from 2 to 1000, got 0";
    QTest::newRow("random count past the cap")
        << R"({"method": "random", "count": 1e12, "sweep": {"optimizer.lr": [1]}})"
        << "bad.json: \"count\" must be an integer from 0 to 10000";
    QTest::newRow("integer range past 2^53")
        << R"({"sweep": {"train.seed": {"min": 0, "max": 1e300, "count": 2}}})"
        << "bad.json: \"train.seed\" is an integer key, but its range reaches past ±2^53";
    QTest::newRow("name too long")
        << QString(R"({"name": "%1", "sweep": {"optimizer.lr": [1e-3]}})").arg(QString(65, 'n'))
        << "bad.json: \"name\" has 65 bytes; a sweep's name has 1 to 64";
  }
  void badFilesAreRefusedInOneLineNamingTheKey() {
    QFETCH(QString, file);
    QFETCH(QString, says);
    const QString error = test::error_of([&] { plan_sweep(file.toStdString(), "bad.json", 0); });
    QVERIFY2(error.contains(says), qPrintable(error));
    QVERIFY2(!error.contains('\n'), qPrintable(error));
  }

  // The product of the axes was expanded point by point: five axes of 10,000 values (10^20 trials, past
  // int64) filled memory, and 20,000 trials were all validated and queued. Now the plan is refused at once,
  // naming the cap, whichever way the trials multiply.
  void trialsAreCappedBeforeAnyIsPlanned_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("grid") << R"({"sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 200},
                                            "schedule.warmup_steps": {"min": 0, "max": 99, "count": 100}}})";
    QTest::newRow("grid past int64") << R"({"sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 10000},
                                                    "optimizer.beta1": {"min": 0.5, "max": 0.9, "count": 10000},
                                                    "optimizer.beta2": {"min": 0.5, "max": 0.9, "count": 10000},
                                                    "optimizer.eps": {"min": 1e-9, "max": 1e-6, "count": 10000},
                                                    "optimizer.weight_decay": {"min": 0, "max": 0.1, "count": 10000}}})";
    QTest::newRow("random × seeds") << R"({"method": "random", "count": 5000, "seeds": [1, 2, 3],
                                            "sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2}}})";
  }
  void trialsAreCappedBeforeAnyIsPlanned() {
    QFETCH(QString, file);
    const QString error = test::error_of([&] { plan_sweep(file.toStdString(), "big.json", 0); });
    QVERIFY2(error.startsWith("big.json: the sweep has more than 10000 trials, the most one may have (hint: "),
             qPrintable(error));
    QVERIFY(!error.contains('\n'));
  }

  // A run folder keeps the first 100 bytes of a run's name. A sweep's name of any length made trial folders
  // that differ only past that cut; at most 64 bytes, the "-pN" of every trial survives into its folder.
  void trialFoldersTellTrialsApart() {
    const QString file = QString(R"({"name": "%1", "sweep": {"optimizer.lr": {"min": 1e-4, "max": 1e-2, "count": 12},
                                     "optimizer.name": ["adamw", "muon"]}, "seeds": [1, 2]})")
                             .arg(QString(64, 'n'));
    const SweepPlan p = plan_sweep(file.toStdString(), "long.json", 0);
    QCOMPARE(p.trials.size(), size_t{12 * 2 * 2});
    std::set<std::string> folders;
    for (const SweepTrial& t : p.trials) folders.insert(safe_file_name(t.name));
    QCOMPARE(folders.size(), p.trials.size());
  }

  // r·η^k was formed for every k while below train.steps: a product past int64 wrapped negative, stayed
  // "below", and the loop grew its list until memory ran out. The reference multiplies in 128 bits.
  void ashaRungsNeverOverflow_data() {
    QTest::addColumn<qint64>("min_steps");
    QTest::addColumn<qint64>("eta");
    QTest::addColumn<qint64>("steps");
    QTest::newRow("eta past int64 / r") << qint64(2) << qint64(5000000000000000000) << qint64(100);
    QTest::newRow("to the top of int64") << qint64(3) << qint64(1000) << std::numeric_limits<qint64>::max();
    QTest::newRow("just below") << qint64(7) << qint64(3) << qint64(7 * 3 * 3 * 3 + 1);
    QTest::newRow("exactly at") << qint64(7) << qint64(3) << qint64(7 * 3 * 3 * 3);
  }
  void ashaRungsNeverOverflow() {
    QFETCH(qint64, min_steps);
    QFETCH(qint64, eta);
    QFETCH(qint64, steps);
    std::vector<int64_t> expected;
    for (__int128 r = min_steps; r < steps; r *= eta) expected.push_back(static_cast<int64_t>(r));
    QCOMPARE(asha_rungs({min_steps, eta}, steps), expected);
  }

  void ashaPromotesTheTopOfEachRungOnce() {
    QCOMPARE(asha_rungs({4, 2}, 16), (std::vector<int64_t>{4, 8}));
    QCOMPARE(asha_rungs({4, 2}, 4), std::vector<int64_t>{});
    QVERIFY(asha_rungs({0, 2}, 100).empty());
    const double nan = std::nan("");
    // Fewer than η results: nobody is in the top 1/η yet.
    QVERIFY(asha_promotions({{1, 2.0, 2.0, false}}, 2).empty());
    // Four results, η = 2: the best two, NaN (diverged) last whatever its order.
    std::vector<RungResult> rung = {
        {1, 3.0, 3.0, false}, {2, nan, nan, false}, {3, 1.0, 1.0, false}, {4, 2.0, 2.0, false}};
    QCOMPARE(asha_promotions(rung, 2), (std::vector<int64_t>{3, 4}));
    rung[2].promoted = true;  // promoted before: not again
    QCOMPARE(asha_promotions(rung, 2), (std::vector<int64_t>{4}));
    // A target not reached (+inf) ranks by its val loss, and never above one that reached it.
    const double inf = INFINITY;
    QCOMPARE(
        asha_promotions({{1, inf, 5.0, false}, {2, inf, 4.0, false}, {3, 9.0, 6.0, false}, {4, nan, nan, false}}, 2),
        (std::vector<int64_t>{3, 2}));
  }

  void trialMetricReadsTheJournal() {
    const std::string journal =
        "{\"event\":\"eval\",\"step\":4,\"val_loss\":5.0}\n{\"event\":\"eval\",\"step\":8,\"val_loss\":4.0}\n"
        "{\"event\":\"eval\",\"step\":12,\"val_loss\":4.5}\n{\"event\":\"eval\",\"step\":16,\"val_lo";
    QCOMPARE(trial_metric({"final_val_loss", false}, journal, 0).metric, 4.5);  // the cut line is not read
    QCOMPARE(trial_metric({"final_val_loss", false}, journal, 8).metric, 4.0);
    QCOMPARE(trial_metric({"best_val_loss", false}, journal, 0).metric, 4.0);
    QVERIFY(std::isinf(trial_metric({"time_to_target", false}, journal, 0).metric));
    QVERIFY(std::isnan(
        trial_metric({"final_val_loss", false}, journal + "\n{\"event\":\"eval\",\"step\":20,\"val_loss\":null}\n", 0)
            .metric));
  }

  // With η = 3 and three trials the second rung holds one: ASHA alone would stop there. When nothing is left to
  // run and nothing has finished, the best trial of the highest rung reached goes on, to the end.
  void theBestGoesOnWhenNothingElseCan() {
    QTemporaryDir dir;
    RunStore store(dir.filePath("runs.db").toStdString());
    const SweepPlan plan = plan_sweep(
        R"({"base": {"train": {"steps": 20}, "eval": {"every": 2}}, "sweep": {"optimizer.lr": [1, 2, 3]},
            "early_stopping": {"min_steps": 2, "eta": 3}})",
        "s.json", 0);
    SweepStore sweeps(store);
    const int64_t id = sweeps.queue_plan(plan, "local");
    RunQueue q(store);
    const std::vector<QueueItem> items = q.list();
    const auto stop_at = [&](const QueueItem& item, int64_t step, double loss) {
      q.finish(item.id, "stopped", "", 2.0);
      sweeps.record_rung(
          q.item(item.id),
          "{\"event\":\"eval\",\"step\":" + std::to_string(step) + ",\"val_loss\":" + std::to_string(loss) + "}\n",
          step, "/f/step_" + std::to_string(step) + ".safetensors");
    };
    for (size_t i = 0; i < 3; ++i) q.claim(items[i].id, "u" + std::to_string(i), "/f", 1.0);
    stop_at(items[0], 2, 7.0);
    stop_at(items[1], 2, 6.0);
    QVERIFY(sweeps.promotions(id).empty());  // 2 of 3 reported, and one is still running: nothing yet
    stop_at(items[2], 2, 8.0);
    std::vector<Promotion> p = sweeps.promotions(id);  // the top third of three: the best
    QCOMPARE(p.size(), size_t{1});
    QCOMPARE(p[0].queue_id, items[1].id);
    QCOMPARE(p[0].halt_step, int64_t{6});
    q.claim(items[1].id, "u1", "/f", 3.0);
    stop_at(q.item(items[1].id), 6, 5.0);
    p = sweeps.promotions(id);  // alone at rung 1, nothing left to run: it goes on to rung 2 (step 18)
    QCOMPARE(p.size(), size_t{1});
    QCOMPARE(p[0].queue_id, items[1].id);
    QCOMPARE(p[0].rung, int64_t{2});
    QCOMPARE(p[0].halt_step, int64_t{18});
    QCOMPARE(p[0].resume, std::string("/f/step_6.safetensors"));
    q.claim(items[1].id, "u1", "/f", 4.0);
    stop_at(q.item(items[1].id), 18, 4.0);
    p = sweeps.promotions(id);  // and to the end
    QCOMPARE(p.size(), size_t{1});
    QCOMPARE(p[0].halt_step, int64_t{0});
    q.claim(items[1].id, "u1", "/f", 5.0);
    q.finish(items[1].id, "done", "", 6.0);
    sweeps.record_final(q.item(items[1].id), "{\"event\":\"eval\",\"step\":20,\"val_loss\":3.5}\n");
    QVERIFY(sweeps.promotions(id).empty());  // one trial finished: the others stay stopped
  }

  // Array tasks end within seconds of each other, so `sweep advance` runs in several processes at once. Each
  // settled from a snapshot taken before the others' writes, and RunQueue::finish took a row in any state: a
  // trial another advancer had just settled, promoted and started again (rung 1) was set back to stopped.
  // Replayed step by step here; the late advancer now leaves every row as it is.
  void aLateAdvancerLeavesAPromotedTrialAlone() {
    QTemporaryDir dir;
    RunStore store(dir.filePath("runs.db").toStdString());
    const int64_t id = ended_at_rung_zero(store, dir);
    RunQueue queue(store);
    SweepStore sweeps(store);
    const std::vector<QueueItem> seen = queue.list();  // the late advancer's snapshot: both running at rung 0
    for (const QueueItem& q : seen) QCOMPARE(q.state, std::string("running"));
    // The first advancer settles both, promotes the better one and claims it for its next segment.
    for (const QueueItem& q : seen) QVERIFY(settle_ended_run(queue, sweeps, q));
    const std::vector<Promotion> promoted = sweeps.promotions(id);
    QCOMPARE(promoted.size(), size_t{1});
    const QueueItem best = queue.item(promoted[0].queue_id);
    queue.claim(best.id, best.run_uid, best.folder, 3.0);
    // The late advancer, from its snapshot (the folder still says "stopped at rung 0"): nothing to settle.
    for (const QueueItem& q : seen) QVERIFY(!settle_ended_run(queue, sweeps, q));
    QCOMPARE(queue.item(best.id).state, std::string("running"));
    QCOMPARE(queue.item(best.id).rung, int64_t{1});
    for (const QueueItem& q : seen)
      if (q.id != best.id) QCOMPARE(queue.item(q.id).state, std::string("stopped"));
  }

  // The same with real concurrency: advancers in threads of their own, each with its own connection to one
  // store, all settling from one snapshot. Each trial's segment is settled exactly once.
  void concurrentAdvancersSettleEachTrialOnce() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("runs.db").toStdString();
    std::vector<QueueItem> seen;
    {
      RunStore store(db);
      ended_at_rung_zero(store, dir);
      seen = RunQueue(store).list();
    }
    std::atomic<int> settled{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> advancers;
    for (int a = 0; a < 4; ++a)
      advancers.emplace_back([&] {
        RunStore store(db);
        RunQueue queue(store);
        SweepStore sweeps(store);
        while (!go) std::this_thread::yield();
        for (const QueueItem& q : seen) settled += settle_ended_run(queue, sweeps, q) ? 1 : 0;
        sweeps.promotions(seen.front().sweep_id);
      });
    go = true;
    for (std::thread& t : advancers) t.join();
    QCOMPARE(settled.load(), int(seen.size()));
    RunStore store(db);
    RunQueue queue(store);
    int promoted = 0;
    for (const QueueItem& q : seen) promoted += queue.item(q.id).state == "queued";
    QCOMPARE(promoted, 1);
  }

  void spearmanRanksWithTies() {
    QCOMPARE(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    QCOMPARE(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    // Monotone but not linear: still 1 (ranks, not values).
    QCOMPARE(spearman({1e-4, 1e-3, 1e-2}, {1, 8, 1000}), 1.0);
    // Ties take their average rank: x ranks 1.5 1.5 3 4, y ranks 1 2 3 4 → 0.9487 (from the formula by hand).
    QVERIFY(std::abs(spearman({1, 1, 2, 3}, {1, 2, 3, 4}) - 0.9486832980505138) < 1e-12);
    QVERIFY(std::isnan(spearman({1, 2}, {1, 2})));
    QVERIFY(std::isnan(spearman({5, 5, 5}, {1, 2, 3})));
  }

  void queueKeepsOrderReorderRemovalAndPause() {
    QTemporaryDir dir;
    const std::string db = dir.filePath("runs.db").toStdString();
    std::vector<int64_t> ids;
    {
      RunStore store(db);
      RunQueue q(store);
      QVERIFY(!q.paused());
      QCOMPARE(q.parallel(), int64_t{1});
      store.transaction([&] {
        for (const char* name : {"a", "b", "c", "d"}) {
          QueueItem item;
          item.name = name, item.config_json = config_to_json(Config{}, -1);
          ids.push_back(q.add(item));
        }
      });
      q.move(ids[3], 0);   // d next
      q.move(ids[0], 99);  // a last (past the end: the end)
      q.remove(ids[1]);
      q.set_paused(true);
      q.set_parallel(2);
      QVERIFY(!test::error_of([&] { q.set_parallel(0); }).isEmpty());
      QVERIFY(test::error_of([&] { q.move(ids[1], 0); }).contains("is removed, not queued"));
    }
    RunStore store(db);  // what another process (the studio, a new worker) reads
    RunQueue q(store);
    std::vector<std::string> order;
    for (const QueueItem& i : q.list()) order.push_back(i.name + ":" + i.state);
    QCOMPARE(order, (std::vector<std::string>{"d:queued", "c:queued", "a:queued"}));
    QCOMPARE(q.list(true).size(), size_t{4});
    QVERIFY(q.paused());
    QCOMPARE(q.parallel(), int64_t{2});
    QCOMPARE(q.next_queued()->name, std::string("d"));
    q.claim(ids[3], "0123456789abcdef", "/x", 1.0);
    QVERIFY(test::error_of([&] { q.claim(ids[3], "u", "/y", 2.0); }).contains("no longer queued"));
    QVERIFY(test::error_of([&] { q.remove(ids[3]); }).contains("tokamak runs control 0123456789abcdef stop"));
    QCOMPARE(q.next_queued()->name, std::string("c"));
  }

  void aSweepIsQueuedWholeAndPromotionsComeFromTheStore() {
    QTemporaryDir dir;
    RunStore store(dir.filePath("runs.db").toStdString());
    const SweepPlan plan = plan_sweep(
        R"({"name": "s", "base": {"train": {"steps": 16}, "eval": {"every": 4}}, "sweep": {"optimizer.lr": [1, 2, 3, 4]},
            "early_stopping": {"min_steps": 4, "eta": 2}})",
        "s.json", 0);
    SweepStore sweeps(store);
    const int64_t id = sweeps.queue_plan(plan, "local");
    RunQueue q(store);
    const std::vector<QueueItem> items = q.list();
    QCOMPARE(items.size(), size_t{4});
    for (const QueueItem& i : items) QCOMPARE(i.halt_step, int64_t{4});
    // Each trial stops at rung 0 with its val loss there; the best half is promoted, resuming from its checkpoint.
    const double losses[] = {5.0, 3.0, 9.0, 4.0};
    for (size_t i = 0; i < items.size(); ++i) {
      q.claim(items[i].id, "u" + std::to_string(i), "/f", 1.0);
      q.finish(items[i].id, "stopped", "", 2.0);
      sweeps.record_rung(q.item(items[i].id),
                         "{\"event\":\"eval\",\"step\":4,\"val_loss\":" + std::to_string(losses[i]) + "}\n", 4,
                         "/f/step_4.safetensors");
    }
    const std::vector<Promotion> p = sweeps.promotions(id);
    QCOMPARE(p.size(), size_t{2});
    QCOMPARE(p[0].queue_id, items[1].id);
    QCOMPARE(p[1].queue_id, items[3].id);
    QCOMPARE(p[0].rung, int64_t{1});
    QCOMPARE(p[0].halt_step, int64_t{8});
    QCOMPARE(p[0].resume, std::string("/f/step_4.safetensors"));
    QVERIFY(sweeps.promotions(id).empty());  // decided once
    // Promoted trials are back in the queue, first (the last promoted at the head), from their checkpoint.
    QCOMPARE(q.next_queued()->id, items[3].id);
    QCOMPARE(q.item(items[1].id).state, std::string("queued"));
    QCOMPARE(q.item(items[1].id).resume, std::string("/f/step_4.safetensors"));
    QCOMPARE(q.item(items[1].id).halt_step, int64_t{8});
    QCOMPARE(q.item(items[0].id).state, std::string("stopped"));
    const SweepStatus s = sweeps.status(id);
    QCOMPARE(s.trials.size(), size_t{4});
    QVERIFY(s.trials[1].rungs.at(0).promoted);
    QVERIFY(!s.trials[2].rungs.at(0).promoted);
  }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "test_sweep.moc"
