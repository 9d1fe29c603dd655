// The memory estimate against values computed by hand for GPT-2 small (124M) from Korthikanti et al.'s formula,
// and the check that refuses, before allocating, a run that cannot fit the device's memory (issue 10).
#include <QtTest>
#include <sys/resource.h>

#include "engine/config/config.h"
#include "engine/model/memory_estimate.h"
#include "engine/train/events.h"
#include "engine/train/trainer.h"
#include "engine/util/error.h"
#include "tests/support/test_support.h"

using namespace tokamak;

class TestMemoryEstimate : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void gpt2_data();
  void gpt2();
  void formatsBytes();
  void terabyteConfigsFailBeforeAllocating_data();
  void terabyteConfigsFailBeforeAllocating();
  void smallRunsFitAndTheCheckCanBeTurnedOff();
};

static long peakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// N = wte 50304·768 + wpe 1024·768 + 12 blocks · (12·768² + 9·768 + 4·768) + ln_f 2·768 = 124,475,904.
static constexpr qint64 kGpt2Params = 124475904;

void TestMemoryEstimate::gpt2_data() {
  QTest::addColumn<QString>("precision");
  QTest::addColumn<QString>("attention");
  QTest::addColumn<bool>("checkpointing");
  QTest::addColumn<qint64>("batch");
  QTest::addColumn<qint64>("paramBytes");   // bytes per weight (grads and both AdamW states the same)
  QTest::addColumn<qint64>("activations");  // hand-computed, all 12 layers
  // s·b·h·34 = 1024·16·768·34 = 427,819,008 per layer, × 12.
  QTest::newRow("bf16 sdpa b16") << "bf16" << "sdpa" << false << qint64(16) << qint64(4) << qint64(5133828096);
  // s·b·h·(34 + 5·a·s/h) = 786,432 · (34 + 80) = 89,653,248 per layer, × 12.
  QTest::newRow("bf16 naive b1") << "bf16" << "naive" << false << qint64(1) << qint64(4) << qint64(1075838976);
  QTest::newRow("fp32 naive b1 doubles") << "fp32" << "naive" << false << qint64(1) << qint64(4) << qint64(2151677952);
  QTest::newRow("buffered-mask keeps scores") << "bf16" << "buffered-mask" << false << qint64(1) << qint64(4)
                                              << qint64(1075838976);
  // 12 block inputs of 2·s·b·h = 25,165,824 each, plus one block's 427,819,008.
  QTest::newRow("checkpointing b16") << "bf16" << "sdpa" << true << qint64(16) << qint64(4) << qint64(729808896);
  QTest::newRow("bf16-pure halves state") << "bf16-pure" << "sdpa" << false << qint64(16) << qint64(2)
                                          << qint64(5133828096);
}

void TestMemoryEstimate::gpt2() {
  QFETCH(QString, precision);
  QFETCH(QString, attention);
  QFETCH(bool, checkpointing);
  QFETCH(qint64, batch);
  QFETCH(qint64, paramBytes);
  QFETCH(qint64, activations);
  Config c;
  apply_overrides(c, {"model.preset=gpt2", "opt.precision=" + precision.toStdString(),
                      "opt.attention=" + attention.toStdString(), "train.batch_size=" + std::to_string(batch),
                      std::string("opt.activation_checkpointing=") + (checkpointing ? "true" : "false")});
  MemoryEstimate m = estimate_memory(c);
  QCOMPARE(m.parameters, kGpt2Params);
  QCOMPARE(m.weights, kGpt2Params * paramBytes);
  QCOMPARE(m.gradients, kGpt2Params * paramBytes);
  QCOMPARE(m.optimizer, 2 * kGpt2Params * paramBytes);
  QCOMPARE(m.activations, activations);
  QCOMPARE(m.logits, 4 * 1024 * batch * 50304);  // fp32 logits over the padded vocabulary
  QCOMPARE(m.total(), m.weights + m.gradients + m.optimizer + m.activations + m.logits);
}

void TestMemoryEstimate::formatsBytes() {
  char buf[32];
  QCOMPARE(QString(format_bytes(54126420000000, buf, sizeof buf)), QString("54.13 TB"));
  QCOMPARE(QString(format_bytes(5133828096, buf, sizeof buf)), QString("5.13 GB"));
  QCOMPARE(QString(format_bytes(427819008, buf, sizeof buf)), QString("428 MB"));
  QCOMPARE(QString(format_bytes(2048, buf, sizeof buf)), QString("2 KB"));
  QCOMPARE(QString(format_bytes(12, buf, sizeof buf)), QString("12 B"));
}

void TestMemoryEstimate::terabyteConfigsFailBeforeAllocating_data() {
  QTest::addColumn<QStringList>("sets");
  QTest::newRow("100000 layers") << QStringList{"model.preset=gpt2", "model.n_layer=100000"};
  QTest::newRow("width 1048576") << QStringList{"model.n_embd=1048576", "model.n_head=16"};
  QTest::newRow("a million sequences") << QStringList{"model.preset=gpt2", "train.batch_size=1048576"};
  QTest::newRow("long context, stored scores") << QStringList{"model.context=1048576", "opt.attention=naive"};
}

void TestMemoryEstimate::terabyteConfigsFailBeforeAllocating() {
  QFETCH(QStringList, sets);
  Config c;
  for (const QString& s : sets) set_key(c, s.section('=', 0, 0).toStdString(), s.section('=', 1).toStdString());
  QVERIFY(config_problems(c, 0).empty());  // every key in range: only the memory check stands in the way
  const int64_t physical = device_memory_bytes("cpu");
  QVERIFY(physical > (int64_t(1) << 28));
  QVERIFY(static_cast<double>(estimate_memory(c).total()) > 1e12);  // terabytes
  const QString problem = QString::fromStdString(memory_problem(c, physical));
  QVERIFY2(problem.contains("exceeds") && problem.contains("physical memory"), qPrintable(problem));
  // train() refuses it before building the model or reading data: the process does not grow.
  const long before = peakRssKb();
  EventSink sink;
  const QString error = tokamak::test::error_of([&] { train(c, sink); });
  QVERIFY2(error.contains("the memory estimate for this run") && error.contains("memory_check=false"), qPrintable(error));
  QVERIFY2(!error.contains('\n'), qPrintable(error));
  QVERIFY(peakRssKb() - before < 256 * 1024);
}

void TestMemoryEstimate::smallRunsFitAndTheCheckCanBeTurnedOff() {
  Config nano;
  QCOMPARE(QString::fromStdString(memory_problem(nano, device_memory_bytes("cpu"))), QString());
  Config gpt2;
  apply_overrides(gpt2, {"model.preset=gpt2"});
  const QString tight = QString::fromStdString(memory_problem(gpt2, 1000000000));  // 1 GB: gpt2 b16 needs ~8
  QVERIFY2(tight.contains("1.00 GB of physical memory on device cpu"), qPrintable(tight));
  gpt2.memory_check = false;  // the override for people who know better
  QCOMPARE(QString::fromStdString(memory_problem(gpt2, 1000000000)), QString());
  QVERIFY2(tokamak::test::error_of([] { device_memory_bytes("cuda:abc"); }).contains("cuda:abc"), "device named");
}

QTEST_GUILESS_MAIN(TestMemoryEstimate)
#include "test_memory_estimate.moc"
