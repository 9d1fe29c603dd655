// The step profile (engine/metrics/step_profile.h) on CPU: the phases of a report step add up to the step time
// the loop reports beside them, each phase that must take time does, and train.profile=false leaves them out.
#include <ATen/ATen.h>

#include <QtTest>

#include <cmath>

#include "engine/config/config.h"
#include "engine/metrics/step_profile.h"
#include "engine/train/trainer.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

struct Steps : EventSink {
  std::vector<StepEvent> steps;
  void on_step(const StepEvent& e) override { steps.push_back(e); }
};

// Every step reports (log_every=1), so each step_ms is the time of exactly the step whose phases sit beside it.
Config profiled_run(const std::string& data, const std::vector<std::string>& more = {}) {
  Config c;
  apply_overrides(
      c, test::tiny_run_overrides({"data.path=" + data, "model.n_layer=2", "train.batch_size=4", "train.steps=8",
                                   "train.log_every=1", "train.eval_every=0", "train.sample_every=-1",
                                   "train.checkpoint_minutes=0", "opt.precision=fp32", "threads=1"}));
  apply_overrides(c, more);
  return c;
}

}  // namespace

class TestProfile : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void phasesAddUpToTheStepTime_data() {
    QTest::addColumn<int>("accum");
    QTest::newRow("1 micro-step") << 1;
    QTest::newRow("3 micro-steps") << 3;
  }
  // Tolerance: the phases' sum over steps 2..8 is within 5% of the summed step_ms. The two clocks cover the
  // same step; what step_ms has in addition is the previous report's tail (building its metrics, the sink) —
  // tens of µs against steps of milliseconds. Step 1 is left out: its window also holds the loop's set-up.
  void phasesAddUpToTheStepTime() {
    QFETCH(int, accum);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = profiled_run(env.corpus_excerpt(60000),
                            {"train.grad_accum=" + std::to_string(accum), "train.checkpoint_dir=" + env.path("ckpt")});
    Steps r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QCOMPARE(static_cast<int>(r.steps.size()), 8);
    double phases = 0, step_ms = 0;
    for (size_t i = 1; i < r.steps.size(); ++i) {
      const StepEvent& e = r.steps[i];
      QVERIFY2(!e.metrics.has("phase_allreduce_ms"), "one process has nothing to all-reduce");
      for (const PhaseName& phase : phase_names()) {
        const char* key = phase.metric;
        if (std::string(key) == "phase_allreduce_ms") continue;
        // Every phase runs code at every step (zero_grad and the report are "other"): none can be 0.
        QVERIFY2(e.metric(key) > 0, qPrintable(QString("step %1: %2 = %3").arg(e.step).arg(key).arg(e.metric(key))));
        phases += e.metric(key);
      }
      step_ms += e.metric("step_ms");
    }
    QVERIFY2(std::abs(phases - step_ms) < 0.05 * step_ms,
             qPrintable(QString("phases %1 ms vs step_ms %2 ms").arg(phases).arg(step_ms)));
    // The compute phases are most of a step of this model; a lap put in the wrong place would move them.
    double compute = 0;
    for (size_t i = 1; i < r.steps.size(); ++i)
      compute += r.steps[i].metric("phase_forward_ms") + r.steps[i].metric("phase_backward_ms");
    QVERIFY2(compute > 0.5 * step_ms, qPrintable(QString("forward+backward %1 of %2 ms").arg(compute).arg(step_ms)));
    QString each;
    for (const PhaseName& phase : phase_names())
      each += QString(" %1 %2").arg(phase.label).arg(r.steps.back().metric(phase.metric));
    qInfo("accum %d: phases %.2f ms, step_ms %.2f ms over 7 steps (%.2f%%); last step:%s", accum, phases, step_ms,
          100.0 * (phases - step_ms) / step_ms, qPrintable(each));
  }

  void profileOffReportsNoPhases() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = profiled_run(env.corpus_excerpt(60000),
                            {"train.steps=3", "train.profile=false", "train.checkpoint_dir=" + env.path("ckpt")});
    Steps r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QCOMPARE(static_cast<int>(r.steps.size()), 3);
    for (const StepEvent& e : r.steps) {
      QVERIFY(e.metrics.has("step_ms"));
      for (const MetricValue& v : e.metrics) QVERIFY2(v.key.rfind("phase_", 0) != 0, v.key.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestProfile)
#include "test_profile.moc"
