// The training data loader over synthetic shards whose token values name their own position (shard A holds
// 0, 1, 2, ...; shard B starts at 20000), so every row of a batch says where in the source it came from.
#include "engine/torch/train/loader.h"
#include "engine/base/data/shard.h"
#include "engine/base/util/error.h"
#include "tests/support/test_support.h"

#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

using namespace tokamak;
using tokamak::test::error_of;

namespace {

std::string make_shard(const QTemporaryDir& dir, const QString& name, int first, int count) {
  std::vector<uint16_t> tokens(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) tokens[static_cast<size_t>(i)] = static_cast<uint16_t>(first + i);
  std::string path = dir.filePath(name).toStdString();
  write_shard(path, tokens);
  return path;
}

LoaderOptions options(int64_t B, int64_t T, double val_fraction, bool prefetch) {
  LoaderOptions o;
  o.batch_size = B;
  o.context = T;
  o.val_fraction = val_fraction;
  o.prefetch = prefetch;
  return o;
}

std::vector<int64_t> row(const torch::Tensor& t, int64_t r) {
  auto c = t[r].contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

class TestLoader : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  PreparedDataset two_shards_;  // A: 0..9999, B: 20000..27999
  std::vector<uint16_t> a_, b_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    two_shards_.source = "two-shards";
    two_shards_.train_shards = {make_shard(dir_, "a_train_000000.bin", 0, 10000),
                                make_shard(dir_, "a_train_000001.bin", 20000, 8000)};
    two_shards_.train_tokens = 18000;
    a_ = read_shard(two_shards_.train_shards[0]);
    b_ = read_shard(two_shards_.train_shards[1]);
  }

  // Every row equals the raw tokens at some offset of one shard (never across the border between shards),
  // and targets are the same window shifted by one.
  void windowsAreSourceTokensShiftedByOne_data() {
    QTest::addColumn<int>("B");
    QTest::addColumn<int>("T");
    QTest::addColumn<bool>("prefetch");
    QTest::newRow("B4 T16 prefetch") << 4 << 16 << true;
    QTest::newRow("B8 T64 sync") << 8 << 64 << false;
    QTest::newRow("B1 T7999 (window = shard B)") << 1 << 7999 << true;
  }
  void windowsAreSourceTokensShiftedByOne() {
    QFETCH(int, B);
    QFETCH(int, T);
    QFETCH(bool, prefetch);
    Loader loader(two_shards_, options(B, T, 0.0, prefetch));
    QCOMPARE(loader.train_tokens(), uint64_t(18000));
    bool saw_a = false, saw_b = false;
    for (int64_t step = 0; step < 40; ++step) {
      Batch batch = loader.train_batch(step, 0, 1);
      QCOMPARE(batch.inputs.sizes(), (torch::IntArrayRef{B, T}));
      QCOMPARE(batch.targets.sizes(), (torch::IntArrayRef{B, T}));
      QCOMPARE(batch.inputs.scalar_type(), torch::kLong);
      for (int64_t r = 0; r < B; ++r) {
        auto in = row(batch.inputs, r), tg = row(batch.targets, r);
        bool in_a = in[0] < 20000;
        const auto& raw = in_a ? a_ : b_;
        size_t offset = static_cast<size_t>(in_a ? in[0] : in[0] - 20000);
        QVERIFY2(offset + static_cast<size_t>(T) < raw.size(), "window runs past the end of its shard");
        for (int t = 0; t < T; ++t) {
          QCOMPARE(in[static_cast<size_t>(t)], int64_t(raw[offset + static_cast<size_t>(t)]));
          QCOMPARE(tg[static_cast<size_t>(t)], int64_t(raw[offset + static_cast<size_t>(t) + 1]));
        }
        (in_a ? saw_a : saw_b) = true;
      }
    }
    if (T < 1000) QVERIFY2(saw_a && saw_b, "windows should come from both shards");
  }

  // Prefetch changes when a batch is made, never what it holds: the same call sequence, with predicted and
  // unpredicted requests, gives equal batches with and without it.
  void sameStepSameBatchWithAndWithoutPrefetch() {
    Loader with(two_shards_, options(4, 32, 0.05, true));
    Loader without(two_shards_, options(4, 32, 0.05, false));
    const std::vector<std::pair<int64_t, int64_t>> calls = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2},
                                                            {7, 0}, {7, 0}, {3, 2}, {4, 0}, {0, 1}, {4, 1}};
    std::map<std::pair<int64_t, int64_t>, torch::Tensor> first;
    for (auto [step, micro] : calls) {
      Batch a = with.train_batch(step, micro, 3);
      Batch b = without.train_batch(step, micro, 3);
      QVERIFY(torch::equal(a.inputs, b.inputs));
      QVERIFY(torch::equal(a.targets, b.targets));
      auto it = first.find({step, micro});
      if (it != first.end()) QVERIFY(torch::equal(it->second, a.inputs));
      first[{step, micro}] = a.inputs;
    }
    QVERIFY(!torch::equal(first[{0, 0}], first[{0, 1}]));
    QVERIFY(!torch::equal(first[{0, 0}], first[{1, 0}]));
    // A fresh loader (a resumed run) sees the same batches.
    Loader resumed(two_shards_, options(4, 32, 0.05, true));
    QVERIFY(torch::equal(resumed.train_batch(4, 1, 3).inputs, first[{4, 1}]));
  }

  // Ranks draw from disjoint slices: no token read by one rank is ever read by another.
  void ranksDrawDisjointWindows_data() {
    QTest::addColumn<int>("world");
    QTest::newRow("2 ranks") << 2;
    QTest::newRow("4 ranks") << 4;
  }
  void ranksDrawDisjointWindows() {
    QFETCH(int, world);
    std::vector<std::set<int64_t>> seen(static_cast<size_t>(world));
    std::vector<torch::Tensor> step0;
    for (int r = 0; r < world; ++r) {
      LoaderOptions o = options(8, 32, 0.0, r % 2 == 0);
      o.rank = r;
      o.world_size = world;
      Loader loader(two_shards_, o);
      step0.push_back(loader.train_batch(0, 0, 1).inputs);
      for (int64_t step = 0; step < 100; ++step) {
        auto t = loader.train_batch(step, 0, 1).inputs.contiguous();
        const int64_t* p = t.data_ptr<int64_t>();
        seen[static_cast<size_t>(r)].insert(p, p + t.numel());
      }
    }
    for (int r = 0; r < world; ++r)
      for (int q = r + 1; q < world; ++q) {
        QVERIFY(!torch::equal(step0[static_cast<size_t>(r)], step0[static_cast<size_t>(q)]));
        for (int64_t v : seen[static_cast<size_t>(r)])
          QVERIFY2(!seen[static_cast<size_t>(q)].count(v),
                   qPrintable(QString("token %1 read by ranks %2 and %3").arg(v).arg(r).arg(q)));
      }
  }

  // With no val shards, the last val_fraction of the tokens (here 10% = values >= 25800 in shard B) is
  // validation, and no train window ever touches it; val batches are deterministic.
  void valTailDoesNotOverlapTrain() {
    Loader loader(two_shards_, options(8, 32, 0.1, true));
    QCOMPARE(loader.val_tokens(), uint64_t(1800));
    QCOMPARE(loader.train_tokens(), uint64_t(16200));
    for (int64_t step = 0; step < 200; ++step) {
      Batch b = loader.train_batch(step, 0, 1);
      QVERIFY(b.targets.max().item<int64_t>() < 28000 - 1800);
    }
    for (int64_t i = 0; i < 20; ++i) {
      Batch v = loader.val_batch(i);
      QVERIFY(v.inputs.min().item<int64_t>() >= 28000 - 1800);
      QVERIFY(torch::equal(v.inputs + 1, v.targets));
      QVERIFY(torch::equal(v.inputs, loader.val_batch(i).inputs));
    }
  }

  // Val shards, when given, are the validation set and are never trained on.
  void valShardsAreValidation() {
    PreparedDataset d = two_shards_;
    d.val_shards = {make_shard(dir_, "a_val_000000.bin", 40000, 3000)};
    Loader loader(d, options(4, 16, 0.1, true));
    QCOMPARE(loader.train_tokens(), uint64_t(18000));
    QCOMPARE(loader.val_tokens(), uint64_t(3000));
    for (int64_t step = 0; step < 100; ++step)
      QVERIFY(loader.train_batch(step, 0, 1).targets.max().item<int64_t>() < 40000);
    QVERIFY(loader.val_batch(0).inputs.min().item<int64_t>() >= 40000);
  }

  // eval.val_tokens: the val batches 0 .. N/(B·T)-1 hold exactly the first N val tokens as inputs, each once
  // and in order (the targets one further), over two val shards; the windows after them are never used.
  void valTokensAreExactlyTheFirstN() {
    PreparedDataset d = two_shards_;
    d.val_shards = {make_shard(dir_, "b_val_000000.bin", 40000, 1000),
                    make_shard(dir_, "b_val_000001.bin", 50000, 3000)};
    const int64_t B = 4, T = 16,
                  N = 2048;  // 1000 tokens hold 62 windows of the first shard, the rest come from the second
    LoaderOptions o = options(B, T, 0.1, false);
    o.val_tokens = N;
    Loader loader(d, o);
    std::vector<int64_t> inputs;
    for (int64_t i = 0; i < N / (B * T); ++i) {
      Batch v = loader.val_batch(i);
      QVERIFY(torch::equal(v.inputs.narrow(1, 1, T - 1), v.targets.narrow(1, 0, T - 1)));
      for (int64_t r = 0; r < B; ++r)
        for (int64_t x : row(v.inputs, r)) inputs.push_back(x);
    }
    std::vector<int64_t> want;
    for (int k = 0; k < 62 * 16; ++k) want.push_back(40000 + k);
    for (int k = 0; static_cast<int64_t>(want.size()) < N; ++k) want.push_back(50000 + k);
    QVERIFY(inputs == want);
    // The next batch starts over: nothing past the N-th token is ever evaluated.
    QVERIFY(torch::equal(loader.val_batch(N / (B * T)).inputs, loader.val_batch(0).inputs));
    // More than the val data hold: one line naming the key.
    o.val_tokens = 4096;
    const QString e = error_of([&] { Loader l(d, o); });
    QVERIFY2(e.contains("fewer than eval.val_tokens (4096)"), qPrintable(e));
  }

  void errors_data() {
    QTest::addColumn<int>("tokens");
    QTest::addColumn<int>("T");
    QTest::addColumn<double>("val_fraction");
    QTest::addColumn<QString>("expected");
    QTest::newRow("shorter than a window") << 50 << 64 << 0.0 << "has 50 tokens, fewer than one window of 65";
    QTest::newRow("nothing left after val") << 100 << 64 << 0.1 << "remain for training";
  }
  void errors() {
    QFETCH(int, tokens);
    QFETCH(int, T);
    QFETCH(double, val_fraction);
    QFETCH(QString, expected);
    PreparedDataset d;
    d.source = "tiny.txt";
    d.train_shards = {make_shard(dir_, "tiny.bin", 0, tokens)};
    QString msg = error_of([&] { Loader loader(d, options(2, T, val_fraction, true)); });
    QVERIFY2(msg.contains(expected) && msg.contains("tiny.txt") && msg.contains("hint"), qPrintable(msg));
  }

  void noValSplitIsAnErrorOnlyWhenAsked() {
    Loader loader(two_shards_, options(2, 16, 0.0, false));
    QCOMPARE(loader.val_tokens(), uint64_t(0));
    QVERIFY(error_of([&] { loader.val_batch(0); }).contains("no validation split"));
  }
};

QTEST_GUILESS_MAIN(TestLoader)
#include "test_loader.moc"
