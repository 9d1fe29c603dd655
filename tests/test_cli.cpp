// The `tokamak` command line as a user meets it: exit codes, one-line errors with hints, --json events, and a
// run store that can only be read.
#include <QDirIterator>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/base/store/run_store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

namespace {

using tokamak::test::CliResult;
using tokamak::test::run_tokamak;
using tokamak::test::tokamak_bin;

// A ladder of two rungs ("one", and "two" at batch 2) in the scratch folder; "" when it cannot be written.
QString two_rung_ladder(tokamak::test::ScratchEnv& scratch) {
  const QString ladder = QString::fromStdString(scratch.path("ladder.json"));
  QFile f(ladder);
  if (!f.open(QIODevice::WriteOnly)) return "";
  f.write(R"({"name": "t", "rungs": [{"name": "one", "set": {}}, {"name": "two", "set": {"train.batch_size": 2}}]})");
  return f.flush() ? ladder : "";
}

// The rows of a speed-of-light table whose header is lines[header]: each a kind with a floor no larger than its
// time (a floor is the least time the work can take, so no kind may beat it) and the limit that sets it, or a kind
// with no count. A floor above its time is a limit that measured low on a busy machine: the table must then say so
// under its rows, naming the kind. Returns what is wrong ("" when nothing is) and leaves AT on the line after the
// rows.
struct Floors {
  QString problem;
  int counted = 0, at = 0;
  double floor_sum = 0;
  int summary = 0;  // the "speed of light:" line, after the warning when there is one
};
Floors check_floors(const QStringList& lines, int header) {
  static const QStringList kinds = {"matmul",   "attention",    "head",      "norm",  "activation",
                                    "residual", "casts/copies", "optimizer", "other", "unattributed"};
  // No count: what no model covers, and casts/copies outside bf16 autocast (`auto` is fp32 on a CPU whose bf16
  // GEMM measured slower).
  static const QStringList uncounted = {"other", "unattributed", "casts/copies"};
  Floors f;
  if (header >= lines.size() || !lines[header].startsWith("kind ") || !lines[header].contains("floor ms"))
    return {"no speed-of-light table", 0, header, 0};
  QStringList over;
  for (f.at = header + 1; f.at < lines.size() && !lines[f.at].startsWith("  "); ++f.at) {
    const QString& line = lines[f.at];
    const QStringList cells = line.split(QRegularExpression("  +"), Qt::SkipEmptyParts);
    if (cells.size() != 8 || !kinds.contains(cells[0])) return {"not a kind's row: " + line, 0, f.at, 0};
    if (cells[4] == "-") {
      if (!uncounted.contains(cells[0])) return {"a modelled kind without a floor: " + line};
      continue;
    }
    ++f.counted;
    f.floor_sum += cells[4].toDouble();
    if (!(cells[4].toDouble() >= 0)) return {"a negative floor: " + line};
    if (cells[4].toDouble() > cells[1].toDouble()) over << cells[0];
    if (cells[7] != "compute" && cells[7] != "memory") return {"bound by neither limit: " + line};
  }
  const QString warning = f.at < lines.size() && lines[f.at].startsWith("  warning: the floor of ") ? lines[f.at] : "";
  for (const QString& kind : over)
    if (!warning.contains(kind)) return {"a floor above its time, and no warning naming " + kind, 0, f.at, 0};
  f.summary = f.at + (warning.isEmpty() ? 0 : 1);
  return f;
}

// A run's start line "matmul limit: 181 GFLOP/s (...)" or "memory limit: 11.2 GB/s from memory (...)" as the rate
// in FLOP/s or B/s and its source; a rate of -1 when the line is not there.
std::pair<double, QString> stated_limit(const QString& err, const QString& which) {
  const auto m =
      QRegularExpression("\\n" + which + " limit: ([0-9.]+) (|k|M|G|T|P)(FLOP/s|B/s)( from memory)? \\(([^\\n]*)\\)")
          .match("\n" + err);
  if (!m.hasMatch()) return {-1, ""};
  const int prefix = QStringList{"", "k", "M", "G", "T", "P"}.indexOf(m.captured(2));
  QString source = m.captured(5);
  if (source.endsWith("), MFU's peak")) source.chop(13);
  return {m.captured(1).toDouble() * std::pow(1000.0, prefix), source};
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { QVERIFY2(QFile::exists(tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)"); }

  void badInputsGiveOneLineErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown key") << QStringList{"train", "--no-store", "--set", "train.stepz=3"}
                                 << "did you mean 'train.steps'";
    QTest::newRow("wrong type") << QStringList{"train", "--no-store", "--set", "optimizer.lr=fast"}
                                << "expects a number";
    QTest::newRow("heads") << QStringList{"train", "--no-store", "--set", "model.n_head=3"}
                           << "must divide model.n_embd";
    QTest::newRow("cuda switch on cpu") << QStringList{"train", "--no-store", "--set", "speed.precision=tf32"}
                                        << "needs a CUDA device";
    QTest::newRow("missing dataset") << QStringList{"train", "--no-store", "--set", "data.path=/no/such/corpus.txt"}
                                     << "/no/such/corpus.txt";
    QTest::newRow("missing config file") << QStringList{"train", "--no-store", "--config", "/no/such.json"}
                                         << "cannot read '/no/such.json'";
    QTest::newRow("missing checkpoint") << QStringList{"generate", "--checkpoint", "/no/such.pt", "--prompt", "x"}
                                        << "does not exist";
    QTest::newRow("find-batch on a CPU") << QStringList{"find-batch", "--set", "device=cpu"}
                                         << "find-batch measures GPU memory";
    // --kernels N of train and bench, one parser: refused before anything runs (the ladder is not even read).
    QTest::newRow("no kernels") << QStringList{"train", "--no-store", "--kernels", "0"}
                                << "--kernels 0: 0 kernels lists nothing";
    QTest::newRow("empty kernels") << QStringList{"train", "--no-store", "--kernels", ""}
                                   << "--kernels '': not a number of kernels to list";
    QTest::newRow("kernels after a blank") << QStringList{"train", "--no-store", "--kernels", " 5"}
                                           << "--kernels  5: not a number of kernels to list";
    QTest::newRow("too many kernels") << QStringList{"train", "--no-store", "--kernels", "99999999999"}
                                      << "--kernels 99999999999: more than the most, 1000000";
    QTest::newRow("negative kernels") << QStringList{"train", "--no-store", "--kernels=-2"} << "--kernels -2:";
    QTest::newRow("kernels in words") << QStringList{"bench", "--ladder", "/no/such.json", "--kernels", "many"}
                                      << "--kernels many:";
    QTest::newRow("kernels under cuda graphs")
        << QStringList{"train", "--no-store", "--kernels", "5", "--set", "speed.cuda_graphs=true"}
        << "--kernels with speed.cuda_graphs is not implemented yet";
    // Ranges are said in words with the fix, as every other refusal (CLI11's own printed DBL_MAX in 300 digits).
    QTest::newRow("no tokens") << QStringList{"generate", "--checkpoint", "/no/such.pt", "--tokens", "0"}
                               << "--tokens: '0' is out of range (hint: give a whole number from 1 to 1000000)";
    QTest::newRow("negative warmup") << QStringList{"bench", "--ladder", "/no/such.json", "--warmup", "-1"}
                                     << "--warmup: must be 0 or more, not -1";
    QTest::newRow("resume from nothing") << QStringList{"train", "--no-store", "--set", "checkpoint.resume=/no/such.pt"}
                                         << "does not exist";
  }
  void badInputsGiveOneLineErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    CliResult r = run_tokamak(args);
    QCOMPARE(r.code, 1);
    // The reason is the last line (a run that got as far as its config table printed that first).
    QString err = QString::fromUtf8(r.err).trimmed().split('\n').last();
    QVERIFY2(err.startsWith("tokamak: "), qPrintable(err));
    QVERIFY2(err.contains(expected), qPrintable(err));
    QVERIFY2(err.contains("hint:"), qPrintable(err));
  }

  // A run's name becomes its folder, which every checkpoint event carries. Cut at byte 100 inside a character,
  // the folder name was invalid UTF-8 and --json ended in the JSON library's error after the run had started;
  // a name that is not UTF-8 at all is refused in one line before any folder exists.
  void anyNameKeepsTheJsonValidAndBadBytesAreRefused() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString name = QString(99, 'a') + QString::fromUtf8("ßüñ");  // byte 100 is the middle of 'ß'
    const QStringList run = tokamak::test::tiny_run_args({"data.path=" + scratch.corpus_excerpt(60000), "train.steps=1",
                                                          "eval.every=0", "sample.every=-1", "threads=1"});
    CliResult r = run_tokamak(QStringList{"train", "--json", "--no-store", "--name", name} + run);
    QVERIFY2(r.code == 0, r.err.constData());
    std::string checkpoint;
    for (const QByteArray& line : r.out.split('\n')) {
      if (line.isEmpty()) continue;
      const nlohmann::json e = nlohmann::json::parse(line.toStdString(), nullptr, false);  // refuses bad UTF-8
      QVERIFY2(!e.is_discarded(), line.constData());
      if (e.value("event", "") == "checkpoint") checkpoint = e.value("path", "");
    }
    QVERIFY2(QFile::exists(QString::fromStdString(checkpoint)), checkpoint.c_str());
    const std::string folder = std::filesystem::path(checkpoint).parent_path().filename().string();
    QVERIFY2(folder.rfind(std::string(99, 'a') + "-", 0) == 0, folder.c_str());  // the whole 'ß' or none of it

    const QString data = QString::fromStdString(scratch.path("data"));
    const QStringList before = QDir(data + "/tokamak/checkpoints").entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    // Through bash: a QString argument cannot carry a byte that is not UTF-8.
    const CliResult bad = tokamak::test::run_program(
        "bash",
        QStringList{"-c", "exec \"$0\" train --no-store --name \"$(printf 'lr\\377')\" \"$@\"", tokamak_bin()} + run);
    QCOMPARE(bad.code, 1);
    const QString err = bad.err_text().trimmed();
    QVERIFY2(err.startsWith("tokamak: ") && !err.contains('\n'), qPrintable(err));
    QVERIFY2(err.contains("name is not valid UTF-8 (byte 3 is 0xFF)") && err.contains("hint:"), qPrintable(err));
    QCOMPARE(QDir(data + "/tokamak/checkpoints").entryList(QDir::Dirs | QDir::NoDotAndDotDot), before);
  }

  // An unknown command is named with the commands there are, at the top and inside `runs`.
  void unknownCommandIsNamed() {
    CliResult r = run_tokamak({"frobnicate"});
    QVERIFY(r.code != 0);
    QString err = QString::fromUtf8(r.err).trimmed();
    QVERIFY2(err.startsWith("tokamak: 'frobnicate' is not a command of tokamak"), qPrintable(err));
    QVERIFY2(err.contains("train") && err.contains("runs") && !err.contains('\n'), qPrintable(err));
    r = run_tokamak({"runs", "frob"});
    err = QString::fromUtf8(r.err).trimmed();
    QVERIFY(r.code != 0);
    QVERIFY2(err.contains("'frob' is not a command of tokamak runs") && err.contains("compare"), qPrintable(err));
    r = run_tokamak({"runs"});  // no command at all: CLI11's own message stays
    QVERIFY(r.code != 0);
    QVERIFY2(!QString::fromUtf8(r.err).contains("is not a command"), r.err.constData());
  }

  void tokenizeRoundTrips() {
    CliResult enc = run_tokamak({"tokenize", "--encode", "Hello world"});
    QCOMPARE(enc.code, 0);
    QCOMPARE(QString::fromUtf8(enc.out).trimmed(), QString("15496 995"));
    CliResult dec = run_tokamak({"tokenize", "--decode", "15496 995"});
    QCOMPARE(dec.code, 0);
    QCOMPARE(QString::fromUtf8(dec.out).trimmed(), QString("Hello world"));
  }

  void defaultsAreAConfigFile() {
    CliResult r = run_tokamak({"config", "--defaults"});
    QCOMPARE(r.code, 0);
    QJsonParseError error{};
    auto doc = QJsonDocument::fromJson(r.out, &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(doc.object()["model"].toObject()["preset"].toString(), QString("nano"));
  }

  // `config --keys` prints every key of the registry with its one description, and an older release's key names
  // still set today's keys on the command line.
  void keysListEveryKeyWithItsDescription() {
    CliResult r = run_tokamak({"config", "--keys", "--set", "train.lr=0.0125", "--set", "opt.precision=fp32"});
    QCOMPARE(r.code, 0);
    const QString out = QString::fromUtf8(r.out);
    const std::vector<tokamak::KeyDoc> keys = tokamak::config_keys();
    QVERIFY(keys.size() > 80);
    for (const tokamak::KeyDoc& k : keys) {
      const QRegularExpression line("^" + QRegularExpression::escape(QString::fromStdString(k.key)) + " +" +
                                        QString::fromStdString(k.type) + " .*" +
                                        QRegularExpression::escape(QString::fromStdString(k.help)) + "$",
                                    QRegularExpression::MultilineOption);
      QVERIFY2(line.match(out).hasMatch(), k.key.c_str());
    }
    QVERIFY(QRegularExpression("^optimizer\\.lr +float +0\\.0125 ", QRegularExpression::MultilineOption)
                .match(out)
                .hasMatch());
    QVERIFY(QRegularExpression("^speed\\.precision +string +fp32 ", QRegularExpression::MultilineOption)
                .match(out)
                .hasMatch());
    QVERIFY(!out.contains("\nopt.") && !out.contains("\ntrain.lr "));
  }

  // Bench rungs and find-batch tries are measured and thrown away, so neither writes a checkpoint (for
  // GPT-2 124M each would be 1.5 GB); find-batch runs on a CPU only when --max bounds it.
  void benchAndFindBatchWriteNoCheckpoint() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString ladder = two_rung_ladder(scratch);
    QVERIFY(!ladder.isEmpty());
    const QStringList sizes = tokamak::test::tiny_run_args(
        {"data.path=" + scratch.corpus_excerpt(50000), "train.batch_size=1", "threads=1", "eval.every=0"});
    const CliResult bench = run_tokamak(QStringList{"bench", "--ladder", ladder, "--steps", "1", "--warmup", "1",
                                                    "--db", QString::fromStdString(scratch.path("runs.db"))} +
                                        sizes);
    QVERIFY2(bench.code == 0, bench.err.constData());
    QVERIFY2(bench.out.contains("two") && !bench.out.contains("failed"), bench.out.constData());
    const CliResult find = run_tokamak(QStringList{"find-batch", "--max", "2"} + sizes);
    QVERIFY2(find.code == 0, find.err.constData());
    QVERIFY2(find.out.contains("largest batch that trains: 2"), find.out.constData());
    QDirIterator it(QFileInfo(ladder).path(), {"*.safetensors"}, QDir::Files, QDirIterator::Subdirectories);
    QVERIFY2(!it.hasNext(), qPrintable("a throwaway run wrote " + (it.hasNext() ? it.next() : QString())));
  }

  // `bench --rungs 1,3`: the rungs chosen alone, numbered as in the whole ladder; the skipped rung 2 of a
  // cumulative ladder still sets its key in rung 3 (the run kept in the store has its weight decay).
  void benchRunsTheChosenRungs() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString ladder = QString::fromStdString(scratch.path("three.json"));
    QFile f(ladder);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(
        R"({"name": "t", "rungs": [{"name": "one", "set": {}}, {"name": "two", "set": {"optimizer.weight_decay": 0.05}},)"
        R"( {"name": "three", "set": {"optimizer.lr": 0.003}}]})");
    f.close();
    const QString db = QString::fromStdString(scratch.path("runs.db"));
    const QStringList sizes = tokamak::test::tiny_run_args(
        {"data.path=" + scratch.corpus_excerpt(50000), "train.batch_size=1", "threads=1", "eval.every=0"});
    const QStringList bench = {"bench", "--ladder", ladder, "--steps", "1", "--warmup", "0", "--db", db};
    const CliResult r = run_tokamak(bench + QStringList{"--rungs", "1,3"} + sizes);
    QVERIFY2(r.code == 0, r.err.constData());
    const QStringList rows = QString::fromUtf8(r.out).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 3);  // the header and two rungs
    QVERIFY2(rows[1].simplified().startsWith("1 one") && rows[2].simplified().startsWith("3 three"), r.out.constData());
    // Each rung says the median and spread of its timed steps, one step each here.
    QCOMPARE(r.err.count("  step times: median "), 2);
    QCOMPARE(r.err.count(" ms, 1 timed steps\n"), 2);
    const CliResult show = run_tokamak({"runs", "show", "2", "--db", db});
    QVERIFY2(show.code == 0 && show.out.contains("t/three"), show.out.constData());
    QVERIFY(show.out.contains(R"("weight_decay": 0.05)"));  // rung two's key, in rung three's config
    QVERIFY(show.out.contains(R"("lr": 0.003)"));
    for (const QString& wrong : {"4", "0", "2-1", "x", "1,,3"}) {
      const CliResult e = run_tokamak(bench + QStringList{"--rungs", wrong} + sizes);
      QVERIFY2(e.code != 0 && e.err.contains("--rungs " + wrong.toUtf8() + ":") && e.err.trimmed().count('\n') == 0,
               e.err.constData());
    }
  }

  // `bench --kernels N`: after each rung, its N costliest operators (kernels on a GPU) over the timed steps from
  // LibTorch's profiler, and a line of totals whose ms/step is the whole of what was profiled.
  // The rate of a plain memcpy of 128 MiB (past a CPU's last-level cache), reads and writes counted, best of three:
  // the reference the measured memory limit is checked against (one thread here, the engine's threads there).
  static double reference_copy_rate() {
    std::vector<char> from(128u << 20, 1), to(128u << 20, 0);
    double best = 1e30;
    for (int i = 0; i < 3; ++i) {
      QElapsedTimer t;
      t.start();
      std::memcpy(to.data(), from.data(), from.size());
      best = std::min(best, t.nsecsElapsed() / 1e9);
      from[i] = static_cast<char>(to[(i * 4099) % to.size()] + 1);  // the copy is read: no compiler may drop it
    }
    return 2.0 * static_cast<double>(from.size()) / best;
  }
  void benchKernelsTablesEachRung() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString ladder = two_rung_ladder(scratch);
    QVERIFY(!ladder.isEmpty());
    const CliResult bench = run_tokamak(
        QStringList{"bench", "--ladder", ladder, "--steps", "4", "--warmup", "1", "--kernels", "3", "--no-store"} +
        tokamak::test::tiny_run_args(
            {"data.path=" + scratch.corpus_excerpt(50000), "train.batch_size=64", "threads=1", "eval.every=0"}));
    QVERIFY2(bench.code == 0, bench.err.constData());
    // Kineto's complaint that a machine without a GPU has none stays out of what the user reads.
    QVERIFY2(!bench.err.contains("gpuGetDeviceCount"), bench.err.constData());
    const QStringList lines = QString::fromUtf8(bench.out).split('\n');
    const QStringList kinds = {"matmul",   "attention",    "head",      "norm",  "activation",
                               "residual", "casts/copies", "optimizer", "other", "unattributed"};
    int tables = 0;
    for (int i = 0; i < lines.size(); ++i) {
      if (!lines[i].startsWith("operator (self)")) continue;
      ++tables;
      QVERIFY2(lines[i].contains(QRegularExpression("kind +launched by$")), qPrintable(lines[i]));
      QVERIFY2(i + 4 < lines.size(), bench.out.constData());
      // The three costliest operators, each with its kind (by what launched it) and its launcher.
      for (int k = 1; k <= 3; ++k) {
        QVERIFY2(lines[i + k].startsWith("aten::") || lines[i + k].startsWith("tokamak::"), qPrintable(lines[i + k]));
        bool kind = false;
        for (const QString& name : kinds) kind = kind || lines[i + k].contains("  " + name + "  ");
        QVERIFY2(kind, qPrintable(lines[i + k]));
      }
      // Then every kind the step did, whose times add up to the step's total (each rounded to 0.01 ms).
      QVERIFY2(lines[i + 4].startsWith("kind "), qPrintable(lines[i + 4]));
      double sum = 0;
      QStringList seen;
      int at = i + 5;
      for (; at < lines.size() && !lines[at].startsWith("  "); ++at) {
        const QStringList cells = lines[at].split(' ', Qt::SkipEmptyParts);
        QVERIFY2(cells.size() == 4 && kinds.contains(cells[0]), qPrintable(lines[at]));
        seen << cells[0];
        sum += cells[2].toDouble();
      }
      for (const char* expected : {"matmul", "attention", "norm", "activation", "residual", "optimizer"})
        QVERIFY2(seen.contains(expected), qPrintable(expected + QString(" missing from: ") + seen.join(", ")));
      const QRegularExpression total("operators' self time: ([0-9.]+) ms/step in all;.* matmul ([0-9.]+)%");
      const auto m = total.match(lines[at]);
      // A model this small spends most of its step around its products (the optimizer's and the casts' launches),
      // yet the products are a real share of it.
      QVERIFY2(m.hasMatch() && m.captured(1).toDouble() > 0 && m.captured(2).toDouble() > 5, qPrintable(lines[at]));
      QVERIFY2(std::abs(sum - m.captured(1).toDouble()) <= 0.01 * seen.size() + 1e-9,
               qPrintable(QString("kinds add up to %1, the total is %2").arg(sum).arg(m.captured(1))));
      // Then each kind against its floor: the work the shapes say it must do over the machine's limits.
      const Floors floors = check_floors(lines, at + 1);
      QVERIFY2(floors.problem.isEmpty(), qPrintable(floors.problem + "\n" + bench.out));
      QVERIFY2(floors.counted >= 6, bench.out.constData());
      at = floors.summary;
      const auto sol = QRegularExpression("speed of light: ([0-9.]+) ms/step measured, floor ([0-9.]+) ms")
                           .match(at < lines.size() ? lines[at] : QString());
      QVERIFY2(
          sol.hasMatch() && std::abs(sol.captured(2).toDouble() - floors.floor_sum) <= 0.01 * floors.counted + 1e-9,
          bench.out.constData());
      // The matmul work counted from the model's shapes is what the profiler counts over its GEMM calls from
      // their input shapes: both are 2·M·N·K a product, and on a CPU every product of this model is an aten::mm or
      // addmm (the attention's are inside the fused sdpa kernel, counted as attention), so they agree but for
      // rounding; 5% would still catch a layer whose forward or backward products the count forgot.
      const auto work =
          QRegularExpression(
              "matmul work: ([0-9.]+) (k|M|G|T)?FLOP a step from the model's shapes, ([0-9.]+) (k|M|G|T)?FLOP "
              "by the profiler's count of its GEMM calls")
              .match(QString::fromUtf8(bench.out));
      QVERIFY2(work.hasMatch(), bench.out.constData());
      const auto flops = [&](int value, int prefix) {
        return work.captured(value).toDouble() *
               std::pow(1000.0, QStringList{"", "k", "M", "G", "T"}.indexOf(work.captured(prefix)));
      };
      QVERIFY2(std::abs(flops(3, 4) / flops(1, 2) - 1) <= 0.05, qPrintable(work.captured(0)));
      // The profile accounts for the step: its kinds add up to the timed step's wall time within 5% (a batch of
      // 64, so that the trainer's and the profiler's few ms outside any operator are a small part of the step:
      // 98–99% here; at batch 16 and two steps it read 94–97%, and 93.6% once on a loaded machine).
      const auto cover = QRegularExpression("the kinds add up to ([0-9.]+) of the ([0-9.]+) ms step")
                             .match(QString::fromUtf8(bench.out));
      QVERIFY2(cover.hasMatch(), bench.out.constData());
      QVERIFY2(std::abs(cover.captured(1).toDouble() / cover.captured(2).toDouble() - 1) <= 0.05,
               qPrintable(cover.captured(0)));
      // The memory limit is a real copy rate: near what a copy this test times itself reaches. The two are timed
      // apart, each with whatever runs beside it (another suite: the limit read 0.22 of the reference once, on a
      // 2-core Xeon under the test command's -j2), so the window is wide; a unit slipped is a factor of 1000.
      const auto memory =
          QRegularExpression("memory ([0-9.]+) (B|kB|MB|GB|TB)/s from memory").match(QString::fromUtf8(bench.out));
      QVERIFY2(memory.hasMatch(), bench.out.constData());
      const double unit = QStringList{"B", "kB", "MB", "GB", "TB"}.indexOf(memory.captured(2));
      const double measured = memory.captured(1).toDouble() * std::pow(1000.0, unit);
      const double reference = reference_copy_rate();
      QVERIFY2(measured > 0.1 * reference && measured < 20 * reference,
               qPrintable(QString("bandwidth %1 B/s against a reference copy's %2 B/s").arg(measured).arg(reference)));
    }
    QCOMPARE(tables, 2);
    // The fused classifier's row kernel is no ATen operator: it is named in the table all the same. Stored, the
    // rung keeps its kinds against their floors, which `runs compare` shows.
    const QString db = QString::fromStdString(scratch.path("kernels.db"));
    const CliResult fused =
        run_tokamak(QStringList{"bench", "--ladder", ladder, "--rungs", "1", "--steps", "1", "--warmup", "1",
                                "--kernels", "100", "--db", db} +
                    tokamak::test::tiny_run_args({"data.path=" + scratch.corpus_excerpt(50000), "train.batch_size=1",
                                                  "threads=1", "eval.every=0", "speed.layers=fused"}));
    QVERIFY2(fused.code == 0, fused.err.constData());
    QVERIFY2(QRegularExpression("\\ntokamak::classifier_rows +1\\.0 ").match(QString::fromUtf8(fused.out)).hasMatch(),
             fused.out.constData());
    const CliResult compared = run_tokamak({"runs", "compare", "1", "--db", db});
    QVERIFY2(compared.code == 0, compared.err.constData());
    const QString text = QString::fromUtf8(compared.out);
    QVERIFY2(text.contains("speed of light (--kernels):"), compared.out.constData());
    QVERIFY2(QRegularExpression("\\nmatmul +[0-9.]+ \\([0-9.]+\\)\\n").match(text).hasMatch(),
             compared.out.constData());
    QVERIFY2(QRegularExpression("\\nstep +[0-9.]+ \\([0-9.]+\\)\\n").match(text).hasMatch(), compared.out.constData());
  }

  // A run's start names the machine's two limits, the matmul rate in the run's precision (MFU's peak) and the
  // memory bandwidth, and the run's store row keeps them. The bandwidth is measured at the first start on a machine
  // (an empty cache here) and read from the cache at every start after it.
  void trainStatesBothLimitsAndStoresThem() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString db = QString::fromStdString(scratch.path("runs.db"));
    const std::string data = scratch.corpus_excerpt(20000);
    for (const char* how : {"measured now: ", "kept from earlier measurements: "}) {
      const CliResult r = run_tokamak(QStringList{"train", "--db", db} +
                                      tokamak::test::set_args(tokamak::test::quiet_run_overrides(data, 2)));
      QVERIFY2(r.code == 0, r.err.constData());
      const QString err = QString::fromUtf8(r.err);
      const auto [matmul, matmul_source] = stated_limit(err, "matmul");
      const auto [memory, memory_source] = stated_limit(err, "memory");
      // A CPU's own GEMM in the run's precision (which its name carries: `auto` is fp32 or bf16 by the CPU), and a
      // copy rate past its caches: real rates of a real machine.
      const auto precision = QRegularExpression(" (fp32|bf16) GEMM").match(matmul_source);
      QVERIFY2(matmul > 1e8 && matmul < 1e15 && precision.hasMatch(), r.err.constData());
      QVERIFY2(QRegularExpression("\\nrun [^ ]*-" + precision.captured(1) + "-").match("\n" + err).hasMatch(),
               r.err.constData());
      QVERIFY2(memory > 1e8 && memory < 1e13 && memory_source.startsWith(how), r.err.constData());
      QVERIFY2(memory_source.contains("268 MB") && memory_source.contains("1 thread"), r.err.constData());
    }
    // Both runs' rows keep the limits their starts stated (three significant digits on the line).
    tokamak::RunStore store(db.toStdString());
    for (int64_t id : {1, 2}) {
      const tokamak::SpeedOfLightRecord limits = store.speed_of_light(id);
      QVERIFY2(limits.matmul_flops > 1e8 && limits.memory_bytes_per_s > 1e8, qPrintable(QString::number(id)));
      QVERIFY(QString::fromStdString(limits.matmul_source).contains(" GEMM"));
      QVERIFY(QString::fromStdString(limits.memory_source).contains("copies of"));
      QVERIFY(limits.kinds.empty());  // not profiled
    }
    QVERIFY(QString::fromStdString(store.speed_of_light(2).memory_source).startsWith("kept from earlier"));
  }

  // `train --kernels N`: the steps after the first profiled as bench profiles a rung's, the kernel table and the
  // speed-of-light table printed after the run (on stderr, with the run's other human lines), and the kinds stored
  // with the run.
  void trainKernelsTablesTheRunAndStoresItsFloors() {
    tokamak::test::ScratchEnv scratch;
    QVERIFY(scratch.ok());
    const QString db = QString::fromStdString(scratch.path("runs.db"));
    const QStringList run =
        tokamak::test::set_args(tokamak::test::quiet_run_overrides(scratch.corpus_excerpt(20000), 4));
    const CliResult r = run_tokamak(QStringList{"train", "--db", db, "--kernels", "3"} + run);
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(!r.err.contains("gpuGetDeviceCount"), r.err.constData());
    const QStringList lines = QString::fromUtf8(r.err).split('\n');
    const int table = static_cast<int>(lines.indexOf(QRegularExpression("^operator \\(self\\).*")));
    const int end = static_cast<int>(lines.indexOf(QRegularExpression("^run finished at step 4 .*")));
    QVERIFY2(table > end && end > 0, r.err.constData());  // after the run
    for (int k = 1; k <= 3; ++k)                          // the three costliest operators
      QVERIFY2(lines[table + k].startsWith("aten::") || lines[table + k].startsWith("tokamak::"), r.err.constData());
    const int header = static_cast<int>(lines.indexOf(QRegularExpression("^kind .*floor ms.*"), table));
    const Floors floors = check_floors(lines, header);
    QVERIFY2(floors.problem.isEmpty(), qPrintable(floors.problem + "\n" + r.err));
    QVERIFY2(floors.counted >= 6, r.err.constData());
    QVERIFY2(lines[floors.summary].startsWith("  speed of light: "), r.err.constData());
    // Three steps profiled (2 to 4): the kinds account for the step they were measured over.
    QVERIFY2(
        QString::fromUtf8(r.err).contains(QRegularExpression("the kinds add up to [0-9.]+ of the [0-9.]+ ms step")),
        r.err.constData());
    // Stored: a row per kind with its floor, and the limits the floors were computed under.
    tokamak::RunStore store(db.toStdString());
    const tokamak::SpeedOfLightRecord kept = store.speed_of_light(1);
    QCOMPARE(static_cast<int>(kept.kinds.size()), header > 0 ? floors.at - header - 1 : -1);
    // Each stored row is the printed one: its kind in the table's order, its time and its floor to the table's
    // 0.01 ms. (A floor may sit above its time on a busy machine; check_floors held the table to its warning.)
    for (size_t i = 0; i < kept.kinds.size(); ++i) {
      const tokamak::KindFloorRow& k = kept.kinds[i];
      const QStringList cells =
          lines[header + 1 + static_cast<int>(i)].split(QRegularExpression("  +"), Qt::SkipEmptyParts);
      const QString name = QString::fromStdString(k.kind);
      QCOMPARE(cells.value(0), name);
      QVERIFY2(std::abs(cells.value(1).toDouble() - k.ms) <= 0.0051, qPrintable(name));
      if (cells.value(4) == "-") QVERIFY2(k.floor_ms < 0, qPrintable(name));
      else QVERIFY2(std::abs(cells.value(4).toDouble() - k.floor_ms) <= 0.0051, qPrintable(name));
    }
    QVERIFY(kept.matmul_flops > 1e8 && kept.memory_bytes_per_s > 1e8);
  }

  // The event protocol of docs/ARCHITECTURE.md ("Events before start"), both orders on purpose: in an empty
  // dataset cache the run first prepares the data (progress events, then start); a second run over the same
  // data finds it tokenized and starts at once. Each run's stdout holds only JSON lines.
  void trainEmitsJsonEventsAndGenerateReadsTheCheckpoint() {
    tokamak::test::ScratchEnv scratch;  // empty dataset cache and run store, whatever this machine has cached
    QVERIFY(scratch.ok());
    const QString db = QString::fromStdString(scratch.path("runs.db"));
    const QStringList args = QStringList{"train", "--json", "--db", db} +
                             tokamak::test::tiny_run_args({"train.batch_size=2", "train.steps=4", "train.log_every=2",
                                                           "sample.tokens=4", "eval.batches=1", "threads=1"});
    QString checkpoint;
    for (bool cold : {true, false}) {
      CliResult r = run_tokamak(args);
      QVERIFY2(r.code == 0, r.err.constData());
      QStringList kinds;
      QList<QJsonObject> before_start;
      for (const QByteArray& line : r.out.split('\n')) {
        if (line.isEmpty()) continue;
        QJsonParseError error{};
        QJsonObject e = QJsonDocument::fromJson(line, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, line.constData());  // stdout holds only JSON
        kinds << e["event"].toString();
        if (!kinds.contains("start")) before_start << e;
        // A CPU's MFU divides by its measured GEMM rate (cpu_peak.h): a fraction, never more than the whole.
        if (e["event"] == "step")
          QVERIFY2(
              e["loss"].isDouble() && e["tok_s"].toDouble() > 0 && e["mfu"].toDouble() > 0 && e["mfu"].toDouble() < 1,
              line.constData());
        if (e["event"] == "start") {
          QVERIFY2(e["peak_flops"].toDouble() > 1e8, line.constData());
          QVERIFY2(e["peak_source"].toString().contains("measured"), line.constData());
          QVERIFY2(e["memory_bytes_per_s"].toDouble() > 1e8, line.constData());  // the second limit
          QVERIFY2(e["memory_source"].toString().contains("copies of"), line.constData());
        }
        if (e["event"] == "checkpoint") checkpoint = e["path"].toString();
        if (e["event"] == "end") QCOMPARE(e["status"].toString(), QString("finished"));
      }
      QVERIFY2(kinds.contains("start"), qPrintable(kinds.join(' ')));
      if (cold) {
        // Preparing: only progress events come before start, tokenizing the corpus up to 100%.
        QVERIFY2(!before_start.isEmpty(), "a cold cache must report the data preparation");
        for (const QJsonObject& e : before_start) QCOMPARE(e["event"].toString(), QString("progress"));
        QVERIFY(before_start.first()["what"].toString().startsWith("tokenizing"));
        QCOMPARE(before_start.last()["done"].toDouble(), before_start.last()["total"].toDouble());
      } else {
        QCOMPARE(kinds.first(), QString("start"));  // warm: nothing to prepare
      }
      QCOMPARE(kinds.count("step"), 3);  // step 1 is always reported, then every log_every (2 and 4)
      QVERIFY(kinds.contains("eval") && kinds.contains("sample"));
      QCOMPARE(kinds.last(), QString("end"));
    }
    CliResult g = run_tokamak({"generate", "--checkpoint", checkpoint, "--prompt", "Hacker", "--tokens", "5"});
    QVERIFY2(g.code == 0, g.err.constData());
    QVERIFY(g.out.startsWith("Hacker"));
    CliResult list = run_tokamak({"runs", "list", "--db", db});
    QCOMPARE(list.code, 0);
    QCOMPARE(list.out.count("finished"), 2);
  }

  // The allocator settings compiled into the training process (app/tokamak-engine/malloc_conf.cpp) reach jemalloc:
  // `tokamak train` execs tokamak-engine, and jemalloc prints its options at exit when asked to.
  void trainingProcessKeepsFreedMemory() {
    // MALLOC_CONF adds to the compiled-in settings, changes none of them.
    CliResult r = run_tokamak({"train", "--help"}, tokamak::test::environment_with({"MALLOC_CONF=stats_print:true"}));
    QCOMPARE(r.code, 0);
    const QByteArray all = r.out + r.err;
    QVERIFY2(all.contains("opt.oversize_threshold: 0"), all.right(2000).constData());
    QVERIFY(all.contains("opt.dirty_decay_ms: -1"));
    QVERIFY(all.contains("opt.muzzy_decay_ms: -1"));
  }

  // A copy of a store on read-only media, or another user's: `runs list` reads it, a write says why it fails.
  void readOnlyStoreCanBeListed() {
    QTemporaryDir dir;
    const QString folder = dir.path() + "/ro", db = folder + "/runs.db";
    QVERIFY(QDir().mkpath(folder));
    // The store is made the way a user would get one: by importing a run exported elsewhere.
    QFile exported(dir.path() + "/run.json");
    QVERIFY(exported.open(QIODevice::WriteOnly));
    exported.write(R"({"tokamak_export":1,"runs":[{"uid":"0123456789abcdef","name":"kept-on-a-read-only-disk",
      "status":"finished","created":1700000000,"metrics":[{"step":1,"tokens":64,"train_loss":10.5}]}]})");
    exported.close();
    CliResult imported = run_tokamak({"runs", "import", exported.fileName(), "--db", db});
    QVERIFY2(imported.code == 0, imported.err.constData());
    // chmod a-w on the file and its folder; the folders above stay readable for the unprivileged user below.
    QVERIFY(QFile::setPermissions(db, QFile::ReadOwner | QFile::ReadGroup | QFile::ReadOther));
    const auto rx =
        QFile::ReadOwner | QFile::ExeOwner | QFile::ReadGroup | QFile::ExeGroup | QFile::ReadOther | QFile::ExeOther;
    QVERIFY(QFile::setPermissions(folder, rx) && QFile::setPermissions(dir.path(), rx | QFile::WriteOwner));
    // root writes whatever the mode bits say: run as nobody then, or the test would prove nothing.
    const QString bin = tokamak_bin();
    const bool root = ::geteuid() == 0;
    auto runAs = [&](const QStringList& args) {
      if (!root) return run_tokamak(args, {}, 60000);
      return tokamak::test::run_program(
          "setpriv", QStringList{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin} + args, {}, 60000);
    };
    CliResult list = runAs({"runs", "list", "--db", db});
    QVERIFY2(list.code == 0, list.err.constData());
    QVERIFY2(list.out.contains("kept-on-a-read-only-disk"), list.out.constData());
    CliResult del = runAs({"runs", "delete", "1", "--db", db});
    QCOMPARE(del.code, 1);
    QVERIFY2(del.err.contains("cannot be written") && del.err.contains("hint:"), del.err.constData());
    QCOMPARE(QDir(folder).entryList(QDir::Files), QStringList{"runs.db"});  // no -wal or -shm left behind
    QFile::setPermissions(folder, rx | QFile::WriteOwner);
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
