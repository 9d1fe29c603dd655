// Shards and datasets: the llm.c shard format (round trip, damaged files), source resolution (text file,
// folder of documents, shard folders and globs), the content-keyed token cache, and their errors.
// Caches go to a temporary TOKAMAK_CACHE whose assets/ links to the set-up's real assets.
#include "engine/torch/train/loader.h"
#include "engine/base/data/dataset.h"
#include "engine/base/data/dataset_source.h"
#include "engine/base/data/shard.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace tokamak;
using tokamak::test::error_of;

namespace {

void write_text(const QString& path, const QByteArray& bytes) {
  QDir().mkpath(QFileInfo(path).absolutePath());
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(bytes);
}

std::vector<int32_t> tokens_of(const std::vector<std::string>& shards) {
  std::vector<int32_t> all;
  for (const auto& s : shards)
    for (uint16_t t : read_shard(s)) all.push_back(t);
  return all;
}

std::vector<int32_t> encode(const std::string& text) { return Tokenizer::gpt2().encode(text); }

}  // namespace

class TestData : public QObject {
  Q_OBJECT
  test::ScratchEnv cache_;  // TOKAMAK_CACHE for this run, its assets the set-up's
  QTemporaryDir dir_;       // inputs

  std::string path(const QString& name) const { return dir_.filePath(name).toStdString(); }

 private Q_SLOTS:
  void initTestCase() {
    // The set-up always fetches the assets (CI included): without them this is a failure, not a skip.
    QVERIFY2(cache_.ok() && !test::asset("jargon.txt").empty(), "assets missing: run scripts/setup.sh");
    QVERIFY(dir_.isValid());
  }

  void shardRoundTrip_data() {
    QTest::addColumn<int>("count");
    QTest::newRow("empty") << 0;
    QTest::newRow("one") << 1;
    QTest::newRow("thousands") << 5000;
  }
  void shardRoundTrip() {
    QFETCH(int, count);
    std::vector<uint16_t> tokens(static_cast<size_t>(count));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint16_t>((i * 7919 + 50256) % 65536);
    if (count) tokens.back() = 65535;
    std::string p = path("round.bin");
    write_shard(p, tokens);
    QCOMPARE(QFileInfo(QString::fromStdString(p)).size(), qint64(1024 + 2 * count));
    QCOMPARE(shard_token_count(p), uint64_t(count));
    QVERIFY(read_shard(p) == tokens);
    std::ifstream in(p, std::ios::binary);  // the header is llm.c's, byte for byte
    int32_t header[256];
    in.read(reinterpret_cast<char*>(header), sizeof header);
    QCOMPARE(header[0], 20240520);
    QCOMPARE(header[1], 1);
    QCOMPARE(header[2], count);
    QCOMPARE(header[3], 0);
  }

  void tokenOutsideUint16IsAnError() {
    QVERIFY(error_of([&] { write_shard(path("big.bin"), std::vector<int32_t>{1, 70000}); }).contains("70000"));
    QVERIFY(!QFile::exists(dir_.filePath("big.bin")));
  }

  void badShards_data() {
    QTest::addColumn<int>("magic");
    QTest::addColumn<int>("version");
    QTest::addColumn<int>("claimed");
    QTest::addColumn<int>("actual");
    QTest::addColumn<QString>("expected");
    QTest::newRow("bad magic") << 12345 << 1 << 10 << 10 << "bad magic number 12345";
    QTest::newRow("bad version") << 20240520 << 2 << 10 << 10 << "unsupported version 2";
    QTest::newRow("truncated body") << 20240520 << 1 << 100 << 99 << "truncated";
    QTest::newRow("truncated header") << 20240520 << 1 << 0 << -1 << "truncated";
  }
  void badShards() {
    QFETCH(int, magic);
    QFETCH(int, version);
    QFETCH(int, claimed);
    QFETCH(int, actual);
    QFETCH(QString, expected);
    QByteArray bytes(1024, '\0');
    int32_t header[3] = {magic, version, claimed};
    std::memcpy(bytes.data(), header, sizeof header);
    if (actual < 0) bytes.resize(600);
    else bytes.append(QByteArray(2 * actual, '\1'));
    QString file = dir_.filePath("bad_" + QString::number(magic) + "_" + QString::number(version) + ".bin");
    write_text(file, bytes);
    for (const QString& msg : {error_of([&] { MappedShard m(file.toStdString()); }),
                               error_of([&] { shard_token_count(file.toStdString()); }),
                               error_of([&] { prepare_dataset(file.toStdString()); })}) {
      QVERIFY2(msg.contains(expected), qPrintable(msg));
      QVERIFY2(msg.contains(file), qPrintable(msg));
      QVERIFY2(msg.contains("hint:"), qPrintable(msg));
    }
  }

  void shardWriterSplitsAtTheLimit() {
    QTemporaryDir out;
    ShardWriter w(out.path().toStdString(), "train", 10);
    std::vector<int32_t> tokens(25);
    for (int i = 0; i < 25; ++i) tokens[static_cast<size_t>(i)] = i * 1000;
    w.add(tokens.data(), 7);
    w.add(tokens.data() + 7, 18);
    auto paths = w.finish();
    QCOMPARE(paths.size(), size_t(3));
    QCOMPARE(QFileInfo(QString::fromStdString(paths[2])).fileName(), QString("train_000002.bin"));
    QCOMPARE(shard_token_count(paths[0]), uint64_t(10));
    QCOMPARE(shard_token_count(paths[2]), uint64_t(5));
    QVERIFY(tokens_of(paths) == tokens);
  }

  // Tokenized once; the second prepare finds the manifest and rewrites nothing; an edit that keeps the size
  // is still a different dataset.
  void textFileIsTokenizedOnceThenCached() {
    std::string text = "The quick brown fox jumps over the lazy dog.\nHackers say 'foo' and 'bar'.\n";
    write_text(dir_.filePath("fox.txt"), QByteArray::fromStdString(text));
    uint64_t last_done = 0, last_total = 0;
    PreparedDataset first = prepare_dataset(path("fox.txt"), [&](uint64_t d, uint64_t t) {
      last_done = d;
      last_total = t;
      return true;
    });
    QCOMPARE(last_total, uint64_t(text.size()));
    QCOMPARE(last_done, last_total);
    QCOMPARE(first.train_shards.size(), size_t(1));
    QVERIFY(QString::fromStdString(first.train_shards[0])
                .startsWith(QString::fromStdString(cache_.path("cache/datasets/fox-"))));
    QVERIFY(tokens_of(first.train_shards) == encode(text));
    QCOMPARE(first.train_tokens, uint64_t(encode(text).size()));
    QVERIFY(first.val_shards.empty());
    QVERIFY2(!QString::fromStdString(first.description).contains("cached"), first.description.c_str());

    QString shard = QString::fromStdString(first.train_shards[0]);
    QString manifest = QFileInfo(shard).dir().filePath("manifest.json");
    QDateTime shard_time = QFileInfo(shard).lastModified(), manifest_time = QFileInfo(manifest).lastModified();
    bool called = false;
    PreparedDataset second = prepare_dataset(path("fox.txt"), [&](uint64_t, uint64_t) { return called = true; });
    QVERIFY(!called);
    QVERIFY2(QString::fromStdString(second.description).endsWith("(cached)"), second.description.c_str());
    QVERIFY(second.train_shards == first.train_shards);
    QCOMPARE(second.train_tokens, first.train_tokens);
    QCOMPARE(QFileInfo(shard).lastModified(), shard_time);
    QCOMPARE(QFileInfo(manifest).lastModified(), manifest_time);

    std::string edited = text;
    edited[4] = 'Q';
    write_text(dir_.filePath("fox.txt"), QByteArray::fromStdString(edited));
    PreparedDataset third = prepare_dataset(path("fox.txt"));
    QVERIFY(third.train_shards != first.train_shards);
    QVERIFY(tokens_of(third.train_shards) == encode(edited));
  }

  // A shard without a manifest (a prepare that died before the end) is not a cache hit.
  void unfinishedCacheIsRedone() {
    write_text(dir_.filePath("crash.txt"), "some words that will be tokenized");
    PreparedDataset d = prepare_dataset(path("crash.txt"));
    QString dir = QFileInfo(QString::fromStdString(d.train_shards[0])).absolutePath();
    QVERIFY(QFile::remove(dir + "/manifest.json"));
    QVERIFY(QFile::resize(QString::fromStdString(d.train_shards[0]), 1030));  // and a damaged shard
    PreparedDataset again = prepare_dataset(path("crash.txt"));
    QVERIFY(!QString::fromStdString(again.description).contains("cached"));
    QVERIFY(tokens_of(again.train_shards) == encode("some words that will be tokenized"));
    QVERIFY(QFile::exists(dir + "/manifest.json"));
  }

  // Each file is a document: sorted path order, recursive, 50256 between documents; hidden, empty and
  // binary files are skipped.
  void folderOfDocuments() {
    QString docs = dir_.filePath("docs");
    write_text(docs + "/b.md", "# Second\nA markdown document.");
    write_text(docs + "/a.txt", "First document.");
    write_text(docs + "/sub/c.txt", "Third, in a subfolder.");
    write_text(docs + "/.hidden.txt", "never read");
    write_text(docs + "/.git/config", "never read");
    write_text(docs + "/empty.txt", "");
    write_text(docs + "/image.dat", QByteArray("\x89PNG\0\0\0", 7));
    PreparedDataset d = prepare_dataset(docs.toStdString());
    std::vector<int32_t> expected = encode("First document.");
    for (const char* doc : {"# Second\nA markdown document.", "Third, in a subfolder."}) {
      expected.push_back(Tokenizer::kEndOfText);
      for (int32_t t : encode(doc)) expected.push_back(t);
    }
    QVERIFY(tokens_of(d.train_shards) == expected);
    QVERIFY2(QString::fromStdString(d.description).startsWith("docs/: 3 files"), d.description.c_str());
  }

  // FILE.jsonl: one document per line, from the "text" field or the one named (data.jsonl_field); blank lines
  // are skipped; the field is part of the cache key.
  void jsonlLinesAreDocuments() {
    const QString file = dir_.filePath("corpus.jsonl");
    write_text(file,
               "{\"text\": \"First line.\", \"body\": \"B1\"}\n\n"
               "{\"id\": 7, \"text\": \"Second \\u00e9 line.\", \"body\": \"B2\"}\n"
               "{\"text\": \"Third.\", \"body\": \"B3\"}\n");
    PreparedDataset d = prepare_dataset(file.toStdString());
    std::vector<int32_t> expected = encode("First line.");
    for (const char* doc : {"Second \xc3\xa9 line.", "Third."}) {
      expected.push_back(Tokenizer::kEndOfText);
      for (int32_t t : encode(doc)) expected.push_back(t);
    }
    QVERIFY(tokens_of(d.train_shards) == expected);
    QVERIFY2(QString::fromStdString(d.description).startsWith("corpus.jsonl: 3 documents"), d.description.c_str());
    PreparedDataset b = prepare_dataset(file.toStdString(), {}, "body");
    expected = encode("B1");
    for (const char* doc : {"B2", "B3"}) {
      expected.push_back(Tokenizer::kEndOfText);
      for (int32_t t : encode(doc)) expected.push_back(t);
    }
    QVERIFY(tokens_of(b.train_shards) == expected);
    QVERIFY(b.train_shards.front() != d.train_shards.front());  // another cache entry
  }

  void jsonlMalformedLineNamesIt_data() {
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON") << QByteArray("{\"text\": \"x\"") << "not valid JSON";
    QTest::newRow("not an object") << QByteArray("\"just a string\"") << "is not a JSON object";
    QTest::newRow("no field") << QByteArray("{\"content\": \"x\"}") << "has no field \"text\"";
    QTest::newRow("field a number") << QByteArray("{\"text\": 3}") << "field \"text\" is not a string";
    QTest::newRow("invalid UTF-8") << QByteArray("{\"text\": \"caf\xe9\"}") << "not valid JSON";
  }
  void jsonlMalformedLineNamesIt() {
    QFETCH(QByteArray, line);
    QFETCH(QString, expected);
    const QString file = dir_.filePath("bad.jsonl");
    write_text(file, "{\"text\": \"fine\"}\n\n" + line + "\n{\"text\": \"fine\"}\n");
    const QString err = error_of([&] { prepare_dataset(file.toStdString()); });
    QVERIFY2(err.contains("bad.jsonl' line 3: ") && err.contains(expected), qPrintable(err));
    QVERIFY2(err.contains("hint:") && !err.contains('\n'), qPrintable(err));
  }

  // .bin shards: a folder, a glob or one file; *_val_* shards are validation; other files are ignored.
  void shardSources() {
    QString dir = dir_.filePath("shards");
    QDir().mkpath(dir);
    write_shard((dir + "/web_train_000001.bin").toStdString(), std::vector<uint16_t>(300, 2));
    write_shard((dir + "/web_train_000000.bin").toStdString(), std::vector<uint16_t>(200, 1));
    write_shard((dir + "/web_val_000000.bin").toStdString(), std::vector<uint16_t>(100, 3));
    write_text(dir + "/README.txt", "how these shards were made");

    PreparedDataset folder = prepare_dataset(dir.toStdString());
    QCOMPARE(folder.train_shards.size(), size_t(2));
    QVERIFY(QString::fromStdString(folder.train_shards[0]).endsWith("web_train_000000.bin"));
    QCOMPARE(folder.val_shards.size(), size_t(1));
    QCOMPARE(folder.train_tokens, uint64_t(500));
    QCOMPARE(folder.val_tokens, uint64_t(100));

    PreparedDataset glob = prepare_dataset((dir + "/*_train_*.bin").toStdString());
    QCOMPARE(glob.train_shards, folder.train_shards);
    QVERIFY(glob.val_shards.empty());

    PreparedDataset one = prepare_dataset((dir + "/web_val_000000.bin").toStdString());
    QCOMPARE(one.train_tokens, uint64_t(100));  // one named file is trained on, whatever its name
  }

  // `tokenize --prepare`: train_*.bin and the last fraction in val_*.bin, which prepare_dataset then reads
  // back as a train/val pair.
  void prepareInto() {
    std::string text = "Tokamak prepares datasets into llm.c shards. ";
    std::string long_text;
    for (int i = 0; i < 50; ++i) long_text += text;
    write_text(dir_.filePath("long.txt"), QByteArray::fromStdString(long_text));
    QString out = dir_.filePath("prepared");
    PreparedDataset p = prepare_dataset_into(path("long.txt"), out.toStdString(), 0.1);
    QCOMPARE(p.train_shards.size(), size_t(1));
    QCOMPARE(p.val_shards.size(), size_t(1));
    QVERIFY(QFile::exists(out + "/train_000000.bin") && QFile::exists(out + "/val_000000.bin"));
    uint64_t total = encode(long_text).size();
    QCOMPARE(p.train_tokens + p.val_tokens, total);
    QCOMPARE(p.val_tokens, uint64_t(total / 10));
    std::vector<int32_t> joined = tokens_of(p.train_shards), val = tokens_of(p.val_shards);
    joined.insert(joined.end(), val.begin(), val.end());
    QVERIFY(joined == encode(long_text));

    PreparedDataset back = prepare_dataset(out.toStdString());
    QCOMPARE(back.train_tokens, p.train_tokens);
    QCOMPARE(back.val_tokens, p.val_tokens);
    // Again without validation: the stale val shard is removed, not silently kept.
    prepare_dataset_into(path("long.txt"), out.toStdString(), 0.0);
    QVERIFY(!QFile::exists(out + "/val_000000.bin"));
  }

  void errors_data() {
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing path") << "no/such/file.txt"
                                  << "does not exist";
    QTest::newRow("empty file") << "empty.txt"
                                << "is empty";
    QTest::newRow("empty folder") << "nothing"
                                  << "has no text files or .bin shards";
    QTest::newRow("folder of hidden and binary files") << "unusable"
                                                       << "has no text files or .bin shards";
    QTest::newRow("glob without matches") << "nothing/*.bin"
                                          << "matches no files";
  }
  void errors() {
    QFETCH(QString, source);
    QFETCH(QString, expected);
    write_text(dir_.filePath("empty.txt"), "");
    QDir().mkpath(dir_.filePath("nothing"));
    write_text(dir_.filePath("unusable/.notes"), "hidden");
    write_text(dir_.filePath("unusable/blob"), QByteArray("\0\1\2", 3));
    std::string full = source.startsWith("no/") ? source.toStdString() : path(source);
    QString msg = error_of([&] { prepare_dataset(full); });
    QVERIFY2(msg.contains(expected), qPrintable(msg));
    QVERIFY2(msg.contains(QString::fromStdString(full)), qPrintable(msg));
    QVERIFY2(msg.contains("hint:"), qPrintable(msg));
  }

  // The loader knows T, so it is the one to say that a prepared text is too short to train on.
  void tooShortTextForTheContext() {
    write_text(dir_.filePath("short.txt"), "Hello, world.");
    PreparedDataset d = prepare_dataset(path("short.txt"));
    LoaderOptions o;
    o.context = 64;
    QString msg = error_of([&] { Loader loader(d, o); });
    QString want = QString("dataset %1 has %2 tokens, fewer than one window of 65")
                       .arg(dir_.filePath("short.txt"))
                       .arg(encode("Hello, world.").size());
    QVERIFY2(msg.contains(want), qPrintable(msg));
    QVERIFY2(msg.contains("model.context"), qPrintable(msg));
  }

  void cancelStopsTokenizing() {
    write_text(dir_.filePath("cancel.txt"), "words to cancel");
    QString msg = error_of([&] { prepare_dataset(path("cancel.txt"), [](uint64_t, uint64_t) { return false; }); });
    QVERIFY2(msg.contains("cancelled"), qPrintable(msg));
  }

  // The default corpus, cold and then cached; the times go in the report.
  void defaultCorpus() {
    QElapsedTimer timer;
    timer.start();
    PreparedDataset cold = prepare_dataset("");
    qint64 cold_ms = timer.restart();
    PreparedDataset warm = prepare_dataset("default");
    qint64 warm_ms = timer.elapsed();
    qInfo("%s: cold %lld ms, cached %lld ms", cold.description.c_str(), cold_ms, warm_ms);
    QCOMPARE(cold.source, std::string("default"));
    QVERIFY(cold.train_tokens > 300000);
    QCOMPARE(warm.train_shards, cold.train_shards);
    QVERIFY(QString::fromStdString(warm.description).endsWith("(cached)"));
  }
};

QTEST_GUILESS_MAIN(TestData)
#include "test_data.moc"
