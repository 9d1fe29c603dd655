// Ladder files: cumulative rungs build on each other, sweeps do not, overrides win, and bad files say why.
// Every ladder shipped in resources/ladders/ must load.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/base/config/config.h"
#include "engine/base/config/ladder.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

using namespace tokamak;

class TestLadder : public QObject {
  Q_OBJECT

  QTemporaryDir dir_;
  std::string write(const char* name, const std::string& text) {
    std::string p = dir_.path().toStdString() + "/" + name;
    write_file_atomically(p, text);
    return p;
  }

 private Q_SLOTS:
  void cumulativeRungsBuildOnEachOther() {
    auto l = load_ladder(write("c.json", R"({"name": "c", "base": {"model.preset": "mini"},
      "rungs": [{"name": "a", "set": {"speed.precision": "fp32"}}, {"name": "b", "set": {"train": {"batch_size": 3}}}]})"));
    QCOMPARE(static_cast<int>(l.rungs.size()), 2);
    QCOMPARE(l.rungs[1].config.train.batch_size, 3);
    QCOMPARE(l.rungs[1].config.speed.precision, Precision::kFp32);  // carried from rung a
    QCOMPARE(l.rungs[1].config.model.n_embd, 384);                                         // from the base
  }

  void sweepRungsApplyToTheBaseAlone() {
    auto l = load_ladder(write("s.json", R"({"name": "s", "cumulative": false,
      "rungs": [{"name": "a", "set": {"speed.precision": "fp32"}}, {"name": "b", "set": {"train.batch_size": 3}}]})"),
                         {"train.steps=7"});
    QCOMPARE(l.rungs[1].config.speed.precision, Config{}.speed.precision);
    QCOMPARE(l.rungs[0].config.train.steps, 7);
    QCOMPARE(l.rungs[1].config.train.steps, 7);
  }

  void badLaddersSayWhy_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not json") << "{"
                              << "is not valid JSON";
    QTest::newRow("no rungs") << R"({"name": "x"})"
                              << "has no \"rungs\" list";
    QTest::newRow("unknown key") << R"({"rungs": [{"name": "a", "set": {"opt.presicion": "fp32"}}]})"
                                 << "rung 'a': unknown config key 'opt.presicion'";
    // A key under its old and its new name in one rung: refused whichever comes first in the file (the file's
    // order never reaches the loader: JSON objects are read sorted).
    QTest::newRow("both names, new first")
        << R"({"rungs": [{"name": "b", "set": {"optimizer.lr": 0.02, "train.lr": 0.01}}]})"
        << "rung 'b': config key 'train.lr' is the old name of 'optimizer.lr', which is given too";
    QTest::newRow("both names, nested")
        << R"({"rungs": [{"name": "b", "set": {"train": {"lr": 0.01}, "optimizer": {"lr": 0.02}}}]})"
        << "rung 'b': config key 'train.lr' is the old name of 'optimizer.lr', which is given too";
    QTest::newRow("both names in the base")
        << R"({"base": {"train.lr": 0.01, "optimizer.lr": 0.02}, "rungs": [{"name": "b"}]})"
        << "base: config key 'train.lr' is the old name of 'optimizer.lr'";
    QTest::newRow("one key twice") << R"({"rungs": [{"name": "b", "set": {"optimizer.lr": 0.02, "optimizer": {"lr": 0.01}}}]})"
                                   << "rung 'b': config key 'optimizer.lr' is given twice";
  }
  void badLaddersSayWhy() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    std::string path = write("bad.json", text.toStdString());
    QString message;
    try {
      load_ladder(path);
    } catch (const Error& e) {
      message = e.what();
    }
    QVERIFY2(message.contains(expected), qPrintable(message));
  }

  // The studio's Open ladder, Run ladder and Open sweep file start where the presets are: a program run from its
  // build finds the source tree's (an installed one, share/tokamak: tests/package_check.sh).
  void presetsAreFoundFromTheBuild() {
    QCOMPARE(QString::fromStdString(presets_dir("ladders")), QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/ladders"));
    QCOMPARE(QString::fromStdString(presets_dir("sweeps")), QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/sweeps"));
    QCOMPARE(QString::fromStdString(presets_dir("no-such-presets")), QString());
  }

  void shippedLaddersLoad() {
    QDir ladders(QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/ladders"));
    const auto files = ladders.entryList({"*.json"});
    QVERIFY(files.size() >= 5);
    for (const QString& f : files) {
      auto l = load_ladder(ladders.filePath(f).toStdString());
      QVERIFY2(l.rungs.size() >= 4, qPrintable(f));
    }
  }

  // A ladder promises only what runs: on a machine with the GPUs it asks for, no rung has a config problem
  // (in particular none uses a switch that is refused as not implemented yet).
  void shippedRungsAreRunnable() {
    QDir ladders(QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/ladders"));
    for (const QString& f : ladders.entryList({"*.json"})) {
      for (const LadderRung& rung : load_ladder(ladders.filePath(f).toStdString()).rungs) {
        const auto problems = config_problems(rung.config, /*cuda_devices=*/8);
        QVERIFY2(problems.empty(), qPrintable(f + " / " + QString::fromStdString(rung.name) + ": " +
                                              QString::fromStdString(problems.empty() ? "" : problems.front())));
      }
    }
  }

  void refusedSwitchesMakeAProblem() {  // the check above can fail: a refused switch in a rung is caught
    auto l = load_ladder(write("r.json", R"({"name": "r", "base": {"device": "cuda"},
      "rungs": [{"name": "fp16", "set": {"speed.precision": "fp16", "speed.cuda_graphs": true}}]})"));
    const auto problems = config_problems(l.rungs[0].config, 8);
    QVERIFY(!problems.empty());
    QVERIFY2(QString::fromStdString(problems.front()).contains("with speed.precision=fp16 is not implemented yet"),
             problems.front().c_str());
  }
};

QTEST_GUILESS_MAIN(TestLadder)
#include "test_ladder.moc"
