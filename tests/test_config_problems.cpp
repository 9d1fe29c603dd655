// config_problems (engine/base/config) for the switches that do not combine: each refusal names the switch and
// the fix, the combinations that work have none, and a limit out of its range is named. Checked on a config
// alone, before any model is built; the runs themselves are test_speedrun_next's and test_train's.
#include <QtTest>

#include <string>
#include <vector>

#include "engine/base/config/config.h"

using namespace tokamak;

namespace {

// Every problem with SETS, one a line: an unknown value is refused as it is set, the rest by config_problems.
QString problems_of(const std::vector<std::string>& sets) {
  Config c;
  try {
    apply_overrides(c, sets);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  QString all;
  for (const std::string& p : config_problems(c, 0)) all += QString::fromStdString(p) + "\n";
  return all;
}

}  // namespace

class TestConfigProblems : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void problemsNameTheSwitchAndTheFix_data() {
    QTest::addColumn<QString>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("polar express without muon") << "optimizer.muon_ns=polar_express"
                                                << "optimizer.name=adamw has no such step";
    QTest::newRow("unknown muon_ns") << "optimizer.muon_ns=svd"
                                     << "optimizer.muon_ns 'svd' is not one of newton_schulz | polar_express (hint: set optimizer.muon_ns";
    QTest::newRow("normuon + zero-1") << "optimizer.name=normuon dist.zero=1"
                                      << "optimizer.name=normuon cannot run with dist.zero=1";
    QTest::newRow("head lr, tied head") << "optimizer.head_lr=0.01"
                                        << "set model.tie_weights=false or optimizer.head_lr=0";
    QTest::newRow("unet skips, one block") << "model.unet_skips=true model.n_layer=1"
                                           << "model.n_layer=1 has no halves";
    QTest::newRow("value embeddings, too few blocks") << "model.value_embeddings=3 model.n_layer=4"
                                                      << "lower model.value_embeddings or raise model.n_layer";
    QTest::newRow("value embeddings, checkpointing") << "model.value_embeddings=1 speed.activation_checkpointing=true"
                                                     << "set speed.activation_checkpointing=false";
    QTest::newRow("fp8 in fp32") << "speed.fp8=true speed.precision=fp32"
                                 << "speed.fp8 runs the MLP's matmuls in fp8 under bf16 autocast, but "
                                    "speed.precision=fp32: set speed.precision=bf16 or speed.fp8=false";
    QTest::newRow("fp8 in pure bf16") << "speed.fp8=true speed.precision=bf16-pure"
                                      << "but speed.precision=bf16-pure: set speed.precision=bf16";
    QTest::newRow("fp8, width not a multiple of 16")
        << "speed.fp8=true speed.precision=bf16 model.n_embd=200 model.n_head=4"
        << "speed.fp8's matmuls need model.n_embd a multiple of 16, but it is 200";
    QTest::newRow("fp8, rows not a multiple of 16")
        << "speed.fp8=true speed.precision=bf16 train.batch_size=3 model.context=10"
        << "train.batch_size × the context a multiple of 16, but it is 30";
    QTest::newRow("unknown spike action") << "health.spike_action=rollbak"
                                          << "health.spike_action 'rollbak' is not one of off | warn | skip | rollback";
    QTest::newRow("negative spike window") << "health.spike_window=-3"
                                           << "health.spike_window must be in [5, 100000], got -3";
    QTest::newRow("zero spike threshold") << "health.spike_threshold=0"
                                          << "health.spike_threshold must be in (0, 1000000], got 0";
    QTest::newRow("rollback, no checkpoints") << "health.spike_action=rollback"
                                              << "checkpoint.every=0 writes none while training";
    QTest::newRow("rollback, data parallel") << "health.spike_action=rollback checkpoint.every=5 dist.gpus=2"
                                             << "rollback with data parallel (dist.gpus > 1) is not implemented yet";
    QTest::newRow("skip, CUDA graphs") << "health.spike_action=skip speed.cuda_graphs=true device=cuda"
                                       << "which a replayed CUDA graph cannot";
  }

  void problemsNameTheSwitchAndTheFix() {
    QFETCH(QString, sets);
    QFETCH(QString, expected);
    std::vector<std::string> list;
    for (const QString& s : sets.split(' ')) list.push_back(s.toStdString());
    const QString all = problems_of(list);
    QVERIFY2(all.contains(expected), qPrintable(all));
  }
  void switchesThatCombineHaveNoProblems_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("muon + polar express") << "optimizer.name=muon optimizer.muon_ns=polar_express";
    QTest::newRow("normuon + polar express, data parallel")
        << "optimizer.name=normuon optimizer.muon_ns=polar_express dist.gpus=2";
    QTest::newRow("head and embed lr, untied, zero-1")
        << "optimizer.head_lr=0.002 optimizer.embed_lr=0.05 model.tie_weights=false dist.gpus=2 dist.zero=1";
    QTest::newRow("unet skips, data parallel, zero-1") << "model.unet_skips=true dist.gpus=2 dist.zero=1";
    QTest::newRow("value embeddings, data parallel, zero-1") << "model.value_embeddings=2 dist.gpus=2 dist.zero=1";
    QTest::newRow("fp8 with checkpointing, fused glue, data parallel")
        << "speed.fp8=true speed.precision=bf16 speed.layers=fused speed.activation_checkpointing=true dist.gpus=2";
    QTest::newRow("fp8, precision auto") << "speed.fp8=true";
    QTest::newRow("warm-ups, data parallel, zero-1")
        << "train.seq_warmup=50 train.batch_warmup=50 dist.gpus=2 dist.zero=1";
  }

  void switchesThatCombineHaveNoProblems() {
    QFETCH(QString, sets);
    std::vector<std::string> list;
    for (const QString& s : sets.split(' ')) list.push_back(s.toStdString());
    QCOMPARE(problems_of(list), QString());
  }
  void skippedStepsLimitIsChecked() {
    Config c;
    apply_overrides(c, {"train.max_skipped_steps=-1"});
    std::string problems;
    for (const std::string& p : config_problems(c, 0)) problems += p + "\n";
    QVERIFY2(problems.find("train.max_skipped_steps must be in [0, ") != std::string::npos, problems.c_str());
  }
};

QTEST_GUILESS_MAIN(TestConfigProblems)
#include "test_config_problems.moc"
