// Bad inputs met before training starts: token ids outside the model's vocabulary, a FIFO given as data, a
// symlink loop in a data folder, text that is not UTF-8, an interrupted or refused `--prepare --out`, run names
// that would climb out of the data folder, and LibTorch errors that carry a C++ backtrace.
#include <ATen/ATen.h>

#include "engine/base/config/config.h"
#include "engine/base/config/ladder.h"
#include "engine/base/data/dataset.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "engine/base/util/error_text.h"
#include "engine/base/util/files.h"
#include "engine/torch/train/torch_error.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/stat.h>

#include <filesystem>

using namespace tokamak;
using tokamak::test::error_of;

namespace {

void writeBytes(const QString& path, const QByteArray& bytes) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

QByteArray readBytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

}  // namespace

class TestFaults : public QObject {
  Q_OBJECT
  test::ScratchEnv cache_;  // TOKAMAK_CACHE for this run, its assets the set-up's
  QTemporaryDir dir_;       // inputs

  std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY2(cache_.ok() && !test::asset("jargon.txt").empty(), "assets missing: run scripts/setup.sh");
    QVERIFY(dir_.isValid());
  }

  // An llm.c shard from a tokenizer with a larger vocabulary than the model's.
  void tokenIdsAboveTheVocabularyAreCaught() {
    std::vector<uint16_t> tokens(200000, 17);
    tokens[150001] = 60000;
    write_shard(path("foreign/train_000000.bin"), tokens);
    PreparedDataset d = prepare_dataset(path("foreign"));
    QString msg = error_of([&] { check_token_ids(d, 50257); });
    QVERIFY2(msg.contains(QString::fromStdString(path("foreign/train_000000.bin"))), qPrintable(msg));
    QVERIFY2(msg.contains("token id 60000") && msg.contains("150,001") && msg.contains("50257"), qPrintable(msg));
    QVERIFY2(msg.contains("hint:") && !msg.contains('\n'), qPrintable(msg));
    QCOMPARE(error_of([&] { check_token_ids(d, 60001); }), QString());  // 60000 is the largest id: it fits
  }

  void fifoAsDataIsRefused() {
    const std::string fifo = path("pipe");
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    QString msg = error_of([&] { prepare_dataset(fifo); });  // hangs in open(2) if the type is not checked
    QVERIFY2(msg.contains("is a FIFO") && msg.contains(QString::fromStdString(fifo)), qPrintable(msg));
    QVERIFY2(msg.contains("hint:"), qPrintable(msg));
    QString dev = error_of([&] { prepare_dataset("/dev/zero"); });
    QVERIFY2(dev.contains("is a character device"), qPrintable(dev));
  }

  void symlinkLoopInAFolderIsSkippedWithAWarning() {
    writeBytes(dir_.filePath("looped/doc.txt"), "A document worth training on.");
    QVERIFY(QFile::link(dir_.filePath("looped/loop"), dir_.filePath("looped/loop")));
    PreparedDataset d;
    QString msg = error_of([&] { d = prepare_dataset(path("looped")); });
    QVERIFY2(msg.isEmpty(), qPrintable(msg));
    QVERIFY(d.train_tokens > 0);
    QCOMPARE(d.warnings.size(), size_t(1));
    QVERIFY2(QString::fromStdString(d.warnings[0]).contains(dir_.filePath("looped/loop")), d.warnings[0].c_str());
  }

  void invalidUtf8IsReportedPerFile() {
    writeBytes(dir_.filePath("latin1/a.txt"), "caf\xe9 and cr\xe8me br\xfbl\xe9\x65");  // Latin-1: 4 bad bytes
    writeBytes(dir_.filePath("latin1/b.txt"), "plain ASCII text");
    for (int pass = 0; pass < 2; ++pass) {  // the second comes from the cache and must say it again
      PreparedDataset d = prepare_dataset(path("latin1"));
      QCOMPARE(d.warnings.size(), size_t(1));
      const QString w = QString::fromStdString(d.warnings[0]);
      QVERIFY2(w.contains(dir_.filePath("latin1/a.txt")) && w.contains("4 invalid UTF-8 sequences"), qPrintable(w));
      QCOMPARE(d.description.find("(cached)") != std::string::npos, pass == 1);
    }
  }

  void prepareIntoAFolderSwapsWholeSets() {
    QString text;
    for (int i = 0; i < 400; ++i) text += QString("Sentence %1 of the first corpus. ").arg(i);
    writeBytes(dir_.filePath("big.txt"), text.toUtf8());
    writeBytes(dir_.filePath("small.txt"), "A much shorter second corpus, of a few tokens.");
    const QString out = dir_.filePath("shards");
    prepare_dataset_into(path("big.txt"), out.toStdString(), 0.1, {}, /*max_shard_tokens=*/1000);
    const QStringList before = entries(out);
    QVERIFY2(before.size() > 2, qPrintable(before.join(' ')));
    const QByteArray first = readBytes(out + "/train_000000.bin");
    // Cancelled half-way through writing a new set (from shards: no tokenizing, only writing): the old set
    // stays, byte for byte, and nothing is left beside it.
    for (int k = 0; k < 3; ++k)
      write_shard(path(QString("other/train_%1.bin").arg(k)),
                  std::vector<uint16_t>(1500, static_cast<uint16_t>(7 + k)));
    QString cancelled = error_of([&] {
      prepare_dataset_into(
          path("other"), out.toStdString(), 0.1, [n = 0](uint64_t, uint64_t) mutable { return ++n < 2; }, 1000);
    });
    QVERIFY2(cancelled.contains("cancelled"), qPrintable(cancelled));
    QCOMPARE(entries(out), before);
    QCOMPARE(readBytes(out + "/train_000000.bin"), first);
    QCOMPARE(entries(dir_.path()).filter(".shards.").size(), 0);
    // Finished: only the new set, none of the old shards.
    PreparedDataset small = prepare_dataset_into(path("small.txt"), out.toStdString(), 0.0);
    QCOMPARE(entries(out), QStringList{"train_000000.bin"});
    QCOMPARE(small.train_shards, std::vector<std::string>{out.toStdString() + "/train_000000.bin"});
    QCOMPARE(entries(dir_.path()).filter(".shards.").size(), 0);
    // A folder that holds anything else is refused before anything is written.
    writeBytes(out + "/notes.md", "mine");
    QString refused = error_of([&] { prepare_dataset_into(path("big.txt"), out.toStdString(), 0.1); });
    QVERIFY2(refused.contains("notes.md") && refused.contains("hint:"), qPrintable(refused));
    QCOMPARE(entries(out), (QStringList{"notes.md", "train_000000.bin"}));
  }

  void runNamesStayInsideTheDataFolder_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("parent") << "../../etc";
    QTest::newRow("slashes") << "a/b/c";
    QTest::newRow("dots") << "..";
    QTest::newRow("absolute") << "/tmp/x";
    QTest::newRow("empty") << "";
  }
  void runNamesStayInsideTheDataFolder() {
    QFETCH(QString, name);
    const std::string safe = safe_file_name(name.toStdString());
    const std::filesystem::path base("/data/checkpoints");
    const std::filesystem::path joined = (base / (safe + "-1234")).lexically_normal();
    QCOMPARE(QString::fromStdString(joined.parent_path().string()), QString("/data/checkpoints"));
    QVERIFY(safe.find('/') == std::string::npos && safe[0] != '.');
  }

  // Names were cut at byte 100, which can fall inside a character: the folder name, and every JSON line that
  // carried it, was then invalid UTF-8. Qt's decoder is the judge here, not the code under test.
  void longNamesAreCutBetweenCharacters_data() {
    QTest::addColumn<int>("ascii");
    QTest::addColumn<QString>("tail");
    for (int ascii = 95; ascii <= 100; ++ascii) {
      QTest::addRow("%d + two-byte", ascii) << ascii << QString::fromUtf8("ßüñéèàç");
      QTest::addRow("%d + three-byte", ascii) << ascii << QString::fromUtf8("€€€€€€€€");
      QTest::addRow("%d + four-byte", ascii) << ascii << QString::fromUtf8("😀😀😀😀😀");
    }
  }
  void longNamesAreCutBetweenCharacters() {
    QFETCH(int, ascii);
    QFETCH(QString, tail);
    const std::string name = std::string(static_cast<size_t>(ascii), 'a') + tail.toStdString();
    const std::string safe = safe_file_name(name);
    const QByteArray bytes = QByteArray::fromStdString(safe);
    QCOMPARE(QString::fromUtf8(bytes).toUtf8(), bytes);              // decodes without U+FFFD: whole characters only
    QVERIFY2(safe.size() <= 100 && safe.size() > 96, safe.c_str());  // as much as fits, no more
    QCOMPARE(name.compare(0, safe.size(), safe), 0);
  }

  // Bytes that are no UTF-8 at all never reach a folder name, and a run with such a name is refused in one
  // line that says which byte, before anything starts (the CLI's end of it: test_cli).
  void namesThatAreNotUtf8AreRefused() {
    const std::string bad = "lr\xff\xfe-run\xc3";  // two stray bytes, then a character cut short
    QCOMPARE(QString::fromStdString(safe_file_name(bad)), QString("lr__-run_"));
    Config c;
    c.name = bad;
    const QString refused = error_of([&] { validate_config(c, 0); });
    QVERIFY2(refused.contains("name is not valid UTF-8 (byte 3 is 0xFF)") && refused.contains("hint:"),
             qPrintable(refused));
    QVERIFY(!refused.contains('\n'));
    for (const char* good : {"", "lr 3e-4", "Lernrate ß", "学习率", "run 😀"}) {
      c.name = good;
      QVERIFY2(error_of([&] { validate_config(c, 0); }).isEmpty(), good);
    }
  }

  // Found by fuzz_config: a JSON number out of double's range made nlohmann throw out_of_range, which escaped
  // as "[json.exception.out_of_range.406] ..." without a hint. Now a tokamak::Error, in configs and ladders.
  void outOfRangeJsonNumberIsAConfigError() {
    bool config_error = false, ladder_error = false;
    try {
      config_from_json(R"({"train": {"steps": 1e999}})");
    } catch (const Error& e) {
      config_error = QString(e.what()).contains("config is not valid JSON") && QString(e.what()).contains("hint:");
    }
    QVERIFY(config_error);
    writeBytes(dir_.filePath("huge.ladder.json"), R"({"rungs": [{"name": "x", "set": {"optimizer.lr": -1e999}}]})");
    try {
      load_ladder(path("huge.ladder.json"));
    } catch (const Error& e) {
      ladder_error = QString(e.what()).contains("is not valid JSON");
    }
    QVERIFY(ladder_error);
  }

  // c10::Error's what() carries a C++ backtrace; the user sees one line of its message.
  void libTorchErrorsLoseTheirBacktrace() {
    try {
      at::ones({2}).view({3});
      QFAIL("view of a wrong size did not throw");
    } catch (const std::exception& e) {
      const QString raw = QString::fromUtf8(e.what()), shown = QString::fromStdString(torch_error_text(e));
      QVERIFY2(shown.contains("invalid for input of size 2"), qPrintable(shown));
      QVERIFY2(!shown.contains('\n') && !shown.contains("Exception raised from") && !shown.contains("frame #"),
               qPrintable(shown));
      QVERIFY(shown.size() < raw.size() || !raw.contains('\n'));
    }
    QCOMPARE(QString::fromStdString(one_line("first\n  second  \n\nException raised from f at x.cpp:1\nframe #0")),
             QString("first; second"));
  }
};

QTEST_GUILESS_MAIN(TestFaults)
#include "test_faults.moc"
