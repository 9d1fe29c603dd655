// The step profile (engine/torch/metrics/step_profile.h) on CPU: the phases of a report are the mean over the same
// steps as the step_ms beside them and add up to it, each phase that must take time does, the window's arithmetic
// (sums over its steps, their mean, the rest to other) is exact, and train.profile=false leaves them out.
#include <ATen/ATen.h>

#include <QtTest>

#include <cmath>

#include "engine/base/config/config.h"
#include "engine/torch/metrics/step_profile.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

// A report every 4 steps, so a report's window holds several steps (and the first report, step 1, the
// loop's set-up besides).
Config profiled_run(const std::string& data, const std::vector<std::string>& more = {}) {
  Config c;
  apply_overrides(c, test::tiny_run_overrides({"data.path=" + data, "model.n_layer=2", "train.batch_size=4",
                                               "train.steps=9", "train.log_every=4", "eval.every=0", "sample.every=-1",
                                               "checkpoint.minutes=0", "speed.precision=fp32", "threads=1"}));
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
  // Every report (steps 1, 4, 8, 9: windows of 1, 3, 4 and 1 steps) carries every phase, and they add up to
  // its step_ms: measured on the same steps, the rest between steps added to other. Within 0.1%: rounding
  // only (a measured sum above step_ms, which nothing should cause, would show here).
  void phasesAddUpToTheStepTime() {
    QFETCH(int, accum);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = profiled_run(env.corpus_excerpt(60000),
                            {"train.grad_accum=" + std::to_string(accum), "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QCOMPARE(static_cast<int>(r.steps.size()), 4);
    QCOMPARE(r.steps[1].step, int64_t(4));
    for (const StepEvent& e : r.steps) {
      QVERIFY2(!e.metrics.has("phase_allreduce_ms"), "one process has nothing to all-reduce");
      double phases = 0;
      for (const PhaseName& phase : phase_names()) {
        const char* key = phase.metric;
        if (std::string(key) == "phase_allreduce_ms") continue;
        if (std::string(key) == "phase_head_ms" && !e.metrics.has(key)) continue;  // native layers: no head phase
        // Every phase runs code at every step (zero_grad and the report are "other"): none can be 0.
        QVERIFY2(e.metric(key) > 0, qPrintable(QString("step %1: %2 = %3").arg(e.step).arg(key).arg(e.metric(key))));
        phases += e.metric(key);
      }
      const double step_ms = e.metric("step_ms");
      QVERIFY2(std::abs(phases - step_ms) <= 1e-3 * step_ms,
               qPrintable(QString("step %1: phases %2 ms vs step_ms %3 ms").arg(e.step).arg(phases).arg(step_ms)));
    }
    // The compute phases are most of a step of this model (set-up aside: from the second report on); a lap put
    // in the wrong place, or a window whose phases were not divided by its steps, would move them.
    for (size_t i = 1; i < r.steps.size(); ++i) {
      const StepEvent& e = r.steps[i];
      const double compute = e.metric("phase_forward_ms") + e.metric("phase_backward_ms") +
                             (e.metrics.has("phase_head_ms") ? e.metric("phase_head_ms") : 0.0);
      QVERIFY2(compute > 0.5 * e.metric("step_ms") && compute < e.metric("step_ms"),
               qPrintable(
                   QString("step %1: forward+backward %2 of %3 ms").arg(e.step).arg(compute).arg(e.metric("step_ms"))));
    }
    QString each;
    for (const PhaseName& phase : phase_names())
      each += QString(" %1 %2").arg(phase.label).arg(r.steps[2].metric(phase.metric));
    qInfo("accum %d: step 8's window:%s, step_ms %.2f", accum, qPrintable(each), r.steps[2].metric("step_ms"));
  }

  // The window's arithmetic, exactly: sums over its steps, their mean per step, and step_ms less the mean's sum
  // added to other; reset() empties the window.
  void windowIsTheMeanOfItsSteps() {
    StepProfile p(c10::Device("cpu"));
    p.reset();
    for (int step = 0; step < 3; ++step) {
      p.begin();
      for (volatile int i = 0; i < 200000; i = i + 1) {}
      p.lap(Phase::kData);
      for (volatile int i = 0; i < 400000; i = i + 1) {}
      p.lap(Phase::kForward);
      p.lap(Phase::kOther);
    }
    QCOMPARE(p.steps(), int64_t(3));
    const std::array<double, kPhaseCount> sums = p.phases_ms();
    QVERIFY(sums[int(Phase::kData)] > 0 && sums[int(Phase::kForward)] > 0);
    double mean = 0;
    for (double v : sums) mean += v / 3;
    const double step_ms = mean + 7.5;  // 7.5 ms a step no mark covered
    Metrics m;
    p.add_to(m, false, step_ms);
    QCOMPARE(m.get("phase_data_ms"), sums[int(Phase::kData)] / 3);
    QCOMPARE(m.get("phase_forward_ms"), sums[int(Phase::kForward)] / 3);
    QCOMPARE(m.get("phase_backward_ms"), 0.0);
    QVERIFY(std::abs(m.get("phase_other_ms") - (sums[int(Phase::kOther)] / 3 + 7.5)) < 1e-9);
    QVERIFY(!m.has("phase_allreduce_ms"));
    p.reset();
    QCOMPARE(p.steps(), int64_t(0));
    for (double v : p.phases_ms()) QCOMPARE(v, 0.0);
  }

  // The fused classifier computes the loss and both of its gradients inside the forward call: that work is the
  // head phase, so forward and backward are the blocks' own (forward no longer several times backward, as a
  // profile that folded the head's gradients into forward read); native layers have no head phase.
  void fusedHeadIsAPhaseOfItsOwn() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    for (const char* layers : {"fused", "native"}) {
      Config c = profiled_run(env.corpus_excerpt(60000), {"speed.layers=" + std::string(layers),
                                                          "checkpoint.dir=" + env.path(std::string("ckpt-") + layers)});
      test::RecordingSink r;
      QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
      for (const StepEvent& e : r.steps) {
        QCOMPARE(e.metrics.has("phase_head_ms"), std::string(layers) == "fused");
        if (std::string(layers) != "fused") continue;
        QVERIFY2(e.metric("phase_head_ms") > 0, qPrintable(QString::number(e.metric("phase_head_ms"))));
      }
      const StepEvent& last = r.steps.back();
      qInfo("%s: forward %.2f, head %.2f, backward %.2f ms", layers, last.metric("phase_forward_ms"),
            last.metrics.has("phase_head_ms") ? last.metric("phase_head_ms") : 0.0, last.metric("phase_backward_ms"));
    }
  }

  void profileOffReportsNoPhases() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = profiled_run(env.corpus_excerpt(60000),
                            {"train.steps=3", "train.profile=false", "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QCOMPARE(static_cast<int>(r.steps.size()), 2);  // steps 1 and 3
    for (const StepEvent& e : r.steps) {
      QVERIFY(e.metrics.has("step_ms"));
      for (const MetricValue& v : e.metrics) QVERIFY2(v.key.rfind("phase_", 0) != 0, v.key.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestProfile)
#include "test_profile.moc"
