// The config tree: --set parsing and type checks, unknown keys naming the nearest key, presets, JSON
// round-trip, and every validation problem found before any work.
#include <QtTest>

#include "engine/config/config.h"
#include "engine/util/error.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using tokamak::test::error_of;

class TestConfig : public QObject {
  Q_OBJECT

 private slots:
  void setParsesEachType() {
    Config c;
    apply_overrides(c, {"train.steps=200", "train.lr=3e-4", "model.tie_weights=false", "opt.precision=bf16"});
    QCOMPARE(c.train.steps, 200);
    QCOMPARE(c.train.lr, 3e-4);
    QCOMPARE(c.model.tie_weights, false);
    QCOMPARE(QString::fromStdString(c.opt.precision), QString("bf16"));
  }

  void badSetsNameTheKey_data() {
    QTest::addColumn<QString>("assignment");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown key suggests the nearest") << "train.step=5" << "did you mean 'train.steps'";
    QTest::newRow("leaf name suggests the full key") << "lr=0.1" << "did you mean 'train.lr'";
    QTest::newRow("int expected") << "train.steps=many" << "expects an integer";
    QTest::newRow("float expected") << "train.lr=fast" << "expects a number";
    QTest::newRow("bool expected") << "model.tie_weights=maybe" << "expects true or false";
    QTest::newRow("not key=value") << "train.steps" << "is not key=value";
    QTest::newRow("unknown preset") << "model.preset=gpt5" << "unknown model.preset 'gpt5'";
  }
  void badSetsNameTheKey() {
    QFETCH(QString, assignment);
    QFETCH(QString, expected);
    Config c;
    QString message = error_of([&] { apply_overrides(c, {assignment.toStdString()}); });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void presetIsAppliedBeforeSizes() {
    Config c;
    apply_overrides(c, {"model.n_layer=3", "model.preset=gpt2"});  // order on the command line does not matter
    QCOMPARE(c.model.n_layer, 3);
    QCOMPARE(c.model.n_embd, 768);
    QCOMPARE(c.model.context, 1024);
  }

  void jsonRoundTrip() {
    Config c;
    apply_overrides(c, {"model.preset=mini", "model.n_layer=5", "train.sample_prompt=Hello \"world\"", "opt.fused_adamw=true"});
    Config back = config_from_json(config_to_json(c));
    QCOMPARE(QString::fromStdString(config_to_json(back)), QString::fromStdString(config_to_json(c)));
    QCOMPARE(back.model.n_layer, 5);
    QCOMPARE(back.model.n_embd, 384);
  }

  void badJsonIsAnError_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << "{train:" << "not valid JSON";
    QTest::newRow("unknown key") << R"({"train": {"stepz": 3}})" << "did you mean 'train.steps'";
    QTest::newRow("wrong type") << R"({"train": {"steps": "3"}})" << "expects int";
    QTest::newRow("not an object") << "[1]" << "must be an object";
  }
  void badJsonIsAnError() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    QString message = error_of([&] { config_from_json(json.toStdString()); });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void problemsAreFoundBeforeWork_data() {
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("heads must divide width") << QStringList{"model.n_head=5"} << "model.n_head (5) must divide model.n_embd (128)";
    QTest::newRow("context longer than the model") << QStringList{"train.context=256"} << "train.context (256) is longer than model.context (128)";
    QTest::newRow("tf32 on cpu") << QStringList{"opt.precision=tf32"} << "opt.precision=tf32 needs a CUDA device";
    QTest::newRow("fp16 on cpu") << QStringList{"opt.precision=fp16"} << "opt.precision=fp16 needs a CUDA device";
    QTest::newRow("fused layers on cpu") << QStringList{"opt.layers=fused"} << "opt.layers=fused needs a CUDA device";
    QTest::newRow("cuda graphs on cpu") << QStringList{"opt.cuda_graphs=true"} << "opt.cuda_graphs needs a CUDA device";
    QTest::newRow("cuda without a gpu") << QStringList{"device=cuda"} << "no CUDA GPU is visible";
    QTest::newRow("unknown attention") << QStringList{"opt.attention=flash"} << "opt.attention 'flash' is not one of";
    QTest::newRow("batch tokens not a multiple") << QStringList{"train.batch_tokens=1000"} << "train.batch_tokens (1000) must be a multiple";
    QTest::newRow("zero steps") << QStringList{"train.steps=0"} << "train.steps must be at least 1";
  }
  void problemsAreFoundBeforeWork() {
    QFETCH(QStringList, sets);
    QFETCH(QString, expected);
    Config c;
    std::vector<std::string> s;
    for (const QString& x : sets) s.push_back(x.toStdString());
    apply_overrides(c, s);
    QString message = error_of([&] { validate_config(c, /*cuda_devices=*/0); });
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  void defaultsAreValid() {
    QVERIFY(config_problems(Config{}, 0).empty());
  }

  void derivedValues() {
    Config c;
    apply_overrides(c, {"train.batch_size=4", "train.batch_tokens=2048"});  // 4 × 128 per micro-step
    QCOMPARE(grad_accum_steps(c), 4);
    QCOMPARE(tokens_per_step(c), 2048);
    QCOMPARE(padded_vocab(c.model), 50304);  // 50257 → next multiple of 64
    c.model.vocab_pad_multiple = 1;
    QCOMPARE(padded_vocab(c.model), 50257);
  }
};

QTEST_GUILESS_MAIN(TestConfig)
#include "test_config.moc"
