// The learning-rate schedules (engine/torch/optim/optimizer.h's learning_rate): the cosine with its warm-up, and the
// speedrun's warm-up, stable, decay ("wsd"). Pure functions of the step; the runs that use them are test_train's
// and test_speedrun_train's.
#include <QtTest>

#include <cmath>

#include "engine/base/config/config.h"
#include "engine/torch/optim/optimizer.h"

using namespace tokamak;

class TestSchedule : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void scheduleWarmsUpThenDecays() {
    Config t;
    t.optimizer.lr = 1.0, t.schedule.warmup_steps = 10, t.train.steps = 110, t.schedule.min_lr_ratio = 0.1;
    QCOMPARE(learning_rate(t, 0), 0.1);
    QCOMPARE(learning_rate(t, 9), 1.0);
    QVERIFY(std::abs(learning_rate(t, 109) - 0.1) < 1e-12);
    QVERIFY(learning_rate(t, 60) < learning_rate(t, 30));
  }
  void wsdHoldsThenDecaysLinearly() {
    Config t;
    t.optimizer.lr = 1.0, t.schedule.warmup_steps = 10, t.train.steps = 110, t.schedule.min_lr_ratio = 0.1;
    t.schedule.decay_fraction = 0.2;
    Config cosine = t;
    t.schedule.name = ScheduleKind::kWsd;
    QCOMPARE(learning_rate(t, 0), 0.1);
    QCOMPARE(learning_rate(t, 9), 1.0);
    QCOMPARE(learning_rate(t, 87), 1.0);  // stable until the last 22 steps (88 .. 109)
    QVERIFY(std::abs(learning_rate(t, 88) - (1.0 - 0.9 / 22)) < 1e-12);
    QVERIFY(std::abs(learning_rate(t, 98) - (1.0 - 0.9 * 11 / 22)) < 1e-12);
    QVERIFY(std::abs(learning_rate(t, 109) - 0.1) < 1e-12);
    QVERIFY(learning_rate(cosine, 60) < 1.0);  // the default is still the cosine
  }
};

QTEST_GUILESS_MAIN(TestSchedule)
#include "test_schedule.moc"
