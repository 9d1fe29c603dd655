// The learning-rate schedules (engine/optim/optimizer.h's learning_rate): the cosine with its warm-up, and the
// speedrun's warm-up, stable, decay ("wsd"). Pure functions of the step; the runs that use them are test_train's
// and test_speedrun_train's.
#include <QtTest>

#include <cmath>

#include "engine/core/config/config.h"
#include "engine/optim/optimizer.h"

using namespace tokamak;

class TestSchedule : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void scheduleWarmsUpThenDecays() {
    TrainConfig t;
    t.lr = 1.0, t.warmup_steps = 10, t.steps = 110, t.min_lr_ratio = 0.1;
    QCOMPARE(learning_rate(t, 0), 0.1);
    QCOMPARE(learning_rate(t, 9), 1.0);
    QVERIFY(std::abs(learning_rate(t, 109) - 0.1) < 1e-12);
    QVERIFY(learning_rate(t, 60) < learning_rate(t, 30));
  }
  void wsdHoldsThenDecaysLinearly() {
    TrainConfig t;
    t.lr = 1.0, t.warmup_steps = 10, t.steps = 110, t.min_lr_ratio = 0.1, t.decay_fraction = 0.2;
    QCOMPARE(learning_rate(t, 0, "wsd"), 0.1);
    QCOMPARE(learning_rate(t, 9, "wsd"), 1.0);
    QCOMPARE(learning_rate(t, 87, "wsd"), 1.0);  // stable until the last 22 steps (88 .. 109)
    QVERIFY(std::abs(learning_rate(t, 88, "wsd") - (1.0 - 0.9 / 22)) < 1e-12);
    QVERIFY(std::abs(learning_rate(t, 98, "wsd") - (1.0 - 0.9 * 11 / 22)) < 1e-12);
    QVERIFY(std::abs(learning_rate(t, 109, "wsd") - 0.1) < 1e-12);
    QVERIFY(learning_rate(t, 60, "cosine") < 1.0);  // the default is still the cosine
  }
};

QTEST_GUILESS_MAIN(TestSchedule)
#include "test_schedule.moc"
