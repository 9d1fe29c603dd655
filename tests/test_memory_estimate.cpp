// The memory estimate against values computed by hand for GPT-2 small (124M) from Korthikanti et al.'s formula,
// and the check that refuses, before allocating, a run that cannot fit the device's memory.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>

#include "engine/torch/model/gpt.h"

// Qt's `slots` keyword macro would break LibTorch's headers: include them first.
#include <QtTest>
#include <sys/resource.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/base/run/events.h"
#include "engine/base/util/error.h"
#include "engine/torch/kernels/classifier.h"
#include "engine/torch/model/memory_estimate.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"

#include <QFile>
#include <nlohmann/json.hpp>

using namespace tokamak;

class TestMemoryEstimate : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void gpt2_data();
  void gpt2();
  void zeroShardsOptimizerState_data();
  void zeroShardsOptimizerState();
  void fusedClassifierHoldsNoLogits();
  void autoLayersAreSizedAsResolved();
  void terabyteConfigsFailBeforeAllocating_data();
  void terabyteConfigsFailBeforeAllocating();
  void smallRunsFitAndTheCheckCanBeTurnedOff();
  void estimateTracksMeasuredPeakRss();
  void nativeHeadPeakIsThreeFp32Logits_data();
  void nativeHeadPeakIsThreeFp32Logits();
  void estimateCoversTheGpuPeaks();
};

namespace {

// LibTorch's CPU allocator with a count of the bytes live in it and their peak: installed once for the
// process (a higher priority than the default), it measures exactly what a step's tensors hold at most. Its
// pointers are "simple" (the context is the data, as raw_allocate requires); the inner allocations are kept by
// address until freed.
class PeakAllocator : public at::Allocator {
 public:
  static PeakAllocator& installed() {
    static PeakAllocator* a = [] {
      auto* p = new PeakAllocator(c10::GetCPUAllocator());
      c10::SetCPUAllocator(p, /*priority=*/100);
      return p;
    }();
    return *a;
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    peak_ = live_;
  }
  int64_t peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
  }
  int64_t live() {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_;
  }

  at::DataPtr allocate(size_t n) override {
    at::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    const c10::Device device = inner.device();
    if (data) {
      std::lock_guard<std::mutex> lock(mutex_);
      live_ += static_cast<int64_t>(n);
      peak_ = std::max(peak_, live_);
      held_.emplace(data, Held{std::move(inner), static_cast<int64_t>(n)});
    }
    return {data, data, &release, device};
  }
  at::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }

 private:
  struct Held {
    at::DataPtr inner;
    int64_t bytes;
  };
  explicit PeakAllocator(at::Allocator* inner) : inner_(inner) {}
  static void release(void* data) {
    PeakAllocator& self = installed();
    at::DataPtr inner;  // freed by its own deleter when it leaves this scope, outside the lock
    {
      std::lock_guard<std::mutex> lock(self.mutex_);
      auto it = self.held_.find(data);
      if (it == self.held_.end()) return;
      self.live_ -= it->second.bytes;
      inner = std::move(it->second.inner);
      self.held_.erase(it);
    }
  }
  at::Allocator* inner_;
  std::mutex mutex_;
  std::unordered_map<void*, Held> held_;
  int64_t live_ = 0, peak_ = 0;
};

}  // namespace

// The output layer of speed.layers=native measured, not assumed (on a GPU the 4·s·b·v term once said 13 GB where
// GPT-2 at batch 64 needs ~40): one forward + backward of a model whose head dominates (1 layer of width 32, 256
// tokens × 50257 classes), its tensors' peak counted by the CPU allocator. The peak is the head's, the blocks'
// activations and the gradients (the weights exist before); the estimate of those must be within 15% of it, and
// the old term would be a third of it.
void TestMemoryEstimate::nativeHeadPeakIsThreeFp32Logits_data() {
  QTest::addColumn<QString>("precision");
  QTest::newRow("fp32") << "fp32";
  QTest::newRow("bf16 autocast") << "bf16";
}

void TestMemoryEstimate::nativeHeadPeakIsThreeFp32Logits() {
  QFETCH(QString, precision);
  Config c;
  apply_overrides(c, {"model.n_layer=1", "model.n_head=2", "model.n_embd=32", "model.context=64", "train.batch_size=4",
                      "speed.layers=native", "speed.attention=sdpa", "speed.precision=" + precision.toStdString()});
  at::manual_seed(1);
  GPT model(GPTOptions::from_config(c.model, c.speed));
  const at::Tensor idx = at::randint(0, c.model.vocab_size, {4, 64}, at::kLong);
  const at::Tensor targets = at::randint(0, c.model.vocab_size, {4, 64}, at::kLong);
  PeakAllocator& counter = PeakAllocator::installed();
  const int64_t before = counter.live();
  counter.reset_peak();
  {
    at::autocast::set_autocast_enabled(at::kCPU, precision == "bf16");
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::Tensor loss = model->forward(idx, targets).loss;
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    loss.backward();
  }
  const double measured = static_cast<double>(counter.peak() - before);
  const MemoryEstimate m = estimate_memory(c);
  const double estimated = static_cast<double>(m.logits + m.activations + m.gradients);
  const QString report = QString("%1: measured peak %2 MB, estimated %3 MB (logits %4 MB)")
                             .arg(precision)
                             .arg(measured / 1e6, 0, 'f', 1)
                             .arg(estimated / 1e6, 0, 'f', 1)
                             .arg(m.logits / 1e6, 0, 'f', 1);
  qInfo("%s", qPrintable(report));
  QVERIFY2(measured > 0.9 * 12 * 256 * 50257, qPrintable(report));  // the head's three fp32 tensors were counted
  QVERIFY2(std::abs(estimated - measured) <= 0.15 * measured, qPrintable(report));
}

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
  // s·b·h·(34 + 4) = 1024·16·768·38 = 478,150,656 per layer, × 12: autocast's fp32 LayerNorm inputs are the 4.
  QTest::newRow("bf16 sdpa b16") << "bf16"
                                 << "sdpa" << false << qint64(16) << qint64(4) << qint64(5737807872);
  // s·b·h·(38 + 5·a·s/h) = 786,432 · (38 + 80) = 92,798,976 per layer, × 12.
  QTest::newRow("bf16 naive b1") << "bf16"
                                 << "naive" << false << qint64(1) << qint64(4) << qint64(1113587712);
  // fp32: every one of the 34 + 80 in 4 bytes: 786,432 · 114 · 2 = 179,306,496 per layer, × 12.
  QTest::newRow("fp32 naive b1 doubles") << "fp32"
                                         << "naive" << false << qint64(1) << qint64(4) << qint64(2151677952);
  QTest::newRow("buffered-mask keeps scores")
      << "bf16"
      << "buffered-mask" << false << qint64(1) << qint64(4) << qint64(1113587712);
  // 12 block inputs in the fp32 residual stream, 4·s·b·h = 50,331,648 each, plus one block's 478,150,656.
  QTest::newRow("checkpointing b16") << "bf16"
                                     << "sdpa" << true << qint64(16) << qint64(4) << qint64(1082130432);
  // No autocast: every activation in 16 bits, Korthikanti's 34 (1024·16·768·34 = 427,819,008 per layer, × 12).
  QTest::newRow("bf16-pure halves state") << "bf16-pure"
                                          << "sdpa" << false << qint64(16) << qint64(2) << qint64(5133828096);
}

void TestMemoryEstimate::gpt2() {
  QFETCH(QString, precision);
  QFETCH(QString, attention);
  QFETCH(bool, checkpointing);
  QFETCH(qint64, batch);
  QFETCH(qint64, paramBytes);
  QFETCH(qint64, activations);
  Config c;
  apply_overrides(c, {"model.preset=gpt2", "speed.precision=" + precision.toStdString(), "speed.layers=native",
                      "speed.attention=" + attention.toStdString(), "train.batch_size=" + std::to_string(batch),
                      std::string("speed.activation_checkpointing=") + (checkpointing ? "true" : "false")});
  MemoryEstimate m = estimate_memory(c);
  QCOMPARE(m.parameters, kGpt2Params);
  QCOMPARE(m.weights, kGpt2Params * paramBytes);
  QCOMPARE(m.gradients, kGpt2Params * paramBytes);
  QCOMPARE(m.optimizer, 2 * kGpt2Params * paramBytes);
  QCOMPARE(m.activations, activations);
  QCOMPARE(m.logits, 12 * 1024 * batch * 50257);  // three fp32 tensors of logits at log_softmax's backward
  QCOMPARE(m.total(), m.weights + m.optimizer + std::max(m.activations + m.logits, m.gradients));  // CPU: no overhead
}

// speed.layers=auto (the default) is sized as what it resolves to: fused on a CPU in fp32 and bf16 (measured
// faster there), fused on a GPU in bf16 (measured on an H200), native for bf16-pure (not measured) and for a model
// that needs the logits whatever the measurements say.
void TestMemoryEstimate::autoLayersAreSizedAsResolved() {
  Config c;
  apply_overrides(c, {"model.preset=gpt2", "train.batch_size=16", "speed.precision=fp32"});
  QCOMPARE(c.speed.layers, LayersKind::kAuto);
  QCOMPARE(QString::fromStdString(c.device), QString("cpu"));
  QCOMPARE(resolved_layers(c, Precision::kFp32), LayersKind::kFused);
  QCOMPARE(resolved_layers(c, Precision::kBf16), LayersKind::kFused);
  QCOMPARE(resolved_layers(c, Precision::kBf16Pure), LayersKind::kNative);
  QCOMPARE(estimate_memory(c).logits, (qint64(1) << 30) + qint64(4) * (16 * 1024 * 768 + 50304 * 768));
  apply_overrides(c, {"speed.layers=native"});
  QCOMPARE(estimate_memory(c).logits, qint64(12) * 1024 * 16 * 50257);
  QCOMPARE(resolved_layers(LayersKind::kAuto, "cuda:1", Precision::kBf16), LayersKind::kFused);  // measured on an H200
  QCOMPARE(resolved_layers(LayersKind::kAuto, "cuda", Precision::kTf32), LayersKind::kNative);   // not measured
  {
    Config g;  // with activation checkpointing fused was slower on a GPU (GPT-2 XL): auto keeps native there
    apply_overrides(g, {"device=cuda", "speed.activation_checkpointing=true"});
    QCOMPARE(resolved_layers(g, Precision::kBf16), LayersKind::kNative);
    apply_overrides(g, {"speed.activation_checkpointing=false"});
    QCOMPARE(resolved_layers(g, Precision::kBf16), LayersKind::kFused);
  }
  QCOMPARE(resolved_layers(LayersKind::kScratch, "cpu", Precision::kFp32), LayersKind::kScratch);
  apply_overrides(c, {"speed.layers=auto", "model.logit_softcap=30"});
  QCOMPARE(resolved_layers(c, Precision::kFp32), LayersKind::kNative);
}

// speed.layers=fused never stores all the B·T·V logits: at most 1 GiB of rows (logits turned into their gradient),
// dx and dW instead.
void TestMemoryEstimate::fusedClassifierHoldsNoLogits() {
  Config c;
  apply_overrides(c, {"model.preset=gpt2", "train.batch_size=16", "speed.layers=fused"});
  const MemoryEstimate fused = estimate_memory(c);
  // 2^30 + 4 bytes × (16 · 1024 · 768 + 50304 · 768) = 1,089,216,512 (16K tokens of bf16 rows would be 1.6 GB)
  QCOMPARE(fused.logits, (qint64(1) << 30) + qint64(4) * (16 * 1024 * 768 + 50304 * 768));
  apply_overrides(c, {"speed.layers=native"});
  const MemoryEstimate native = estimate_memory(c);
  QCOMPARE(native.logits, qint64(12) * 1024 * 16 * 50257);  // 9.9 GB: three fp32 copies of the logits
  QVERIFY(fused.logits * 2 < native.logits);
  QCOMPARE(fused.activations, native.activations);
}

void TestMemoryEstimate::zeroShardsOptimizerState_data() {
  QTest::addColumn<int>("gpus");
  QTest::addColumn<int>("zero");
  QTest::addColumn<qint64>("optimizer");  // AdamW bytes per rank: 2 states × 4 bytes × 124,475,904 / shards
  QTest::newRow("1 rank") << 1 << 0 << qint64(995807232);
  QTest::newRow("1 rank, zero=1: nothing to shard") << 1 << 1 << qint64(995807232);
  QTest::newRow("8 ranks, zero=0") << 8 << 0 << qint64(995807232);
  QTest::newRow("8 ranks, zero=1") << 8 << 1 << qint64(124475904);
  QTest::newRow("3 ranks, zero=1") << 3 << 1 << qint64(331935744);
}

void TestMemoryEstimate::zeroShardsOptimizerState() {
  QFETCH(int, gpus);
  QFETCH(int, zero);
  QFETCH(qint64, optimizer);
  Config c;
  apply_overrides(c, {"model.preset=gpt2", "speed.precision=bf16", "dist.gpus=" + std::to_string(gpus),
                      "dist.zero=" + std::to_string(zero)});
  const MemoryEstimate m = estimate_memory(c);
  QCOMPARE(m.optimizer, optimizer);
  QCOMPARE(m.optimizer_saved, 2 * 4 * kGpt2Params - optimizer);  // what the rank does not hold
  QCOMPARE(m.weights, 4 * kGpt2Params);                          // weights and gradients stay whole
  QCOMPARE(m.gradients, 4 * kGpt2Params);
  QCOMPARE(m.total(), m.weights + m.optimizer + std::max(m.activations + m.logits, m.gradients));  // CPU: no overhead
}

void TestMemoryEstimate::terabyteConfigsFailBeforeAllocating_data() {
  QTest::addColumn<QStringList>("sets");
  QTest::newRow("100000 layers") << QStringList{"model.preset=gpt2", "model.n_layer=100000"};
  QTest::newRow("width 1048576") << QStringList{"model.n_embd=1048576", "model.n_head=16"};
  QTest::newRow("a million sequences") << QStringList{"model.preset=gpt2", "train.batch_size=1048576"};
  QTest::newRow("long context, stored scores") << QStringList{"model.context=1048576", "speed.attention=naive"};
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
  QVERIFY2(error.contains("the memory estimate for this run") && error.contains("memory_check=false"),
           qPrintable(error));
  QVERIFY2(!error.contains('\n'), qPrintable(error));
  QVERIFY(peakRssKb() - before < 256 * 1024);
}

void TestMemoryEstimate::smallRunsFitAndTheCheckCanBeTurnedOff() {
  Config nano;
  QCOMPARE(QString::fromStdString(memory_problem(nano, device_memory_bytes("cpu"))), QString());
  Config gpt2;
  apply_overrides(gpt2, {"model.preset=gpt2"});
  const QString tight = QString::fromStdString(memory_problem(gpt2, 1000000000));  // 1 GB: gpt2 b16 needs ~8
  QVERIFY2(tight.contains("1 GB of physical memory on device cpu"), qPrintable(tight));
  gpt2.memory_check = false;  // the override for people who know better
  QCOMPARE(QString::fromStdString(memory_problem(gpt2, 1000000000)), QString());
  QVERIFY2(tokamak::test::error_of([] { device_memory_bytes("cuda:abc"); }).contains("cuda:abc"), "device named");
}

// The estimate against what a real CPU training process holds: two child `tokamak train` runs of one step, a
// tiny one (LibTorch, tokenizer and data: the fixed cost) and a 38M-parameter fp32 one. The difference of
// their peak resident sizes is what the bigger model itself needed; the estimate's difference must be within
// the stated margin of it: 35% (when written: measured 718 MB, estimated 871 MB, 21% over). Eager CPU
// autograd keeps some temporaries Korthikanti's count leaves out, and the allocator rounds; more than 35%
// off means the estimate stopped describing the engine.
void TestMemoryEstimate::estimateTracksMeasuredPeakRss() {
  test::ScratchEnv env;
  QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
  QVERIFY2(!test::tokamak_bin().isEmpty(), "TOKAMAK_TOKAMAK_BIN is not set (run through ctest)");
  const std::string data = env.corpus_excerpt(300000);
  const std::vector<std::string> common = {"data.path=" + data,    "train.steps=1",     "train.batch_size=8",
                                           "eval.every=0",         "eval.batches=1",    "sample.every=-1",
                                           "speed.precision=fp32", "model.context=256", "threads=2"};
  const std::vector<std::string> tiny = {"model.n_layer=1", "model.n_head=2", "model.n_embd=32"};
  const std::vector<std::string> big = {"model.n_layer=4", "model.n_head=8", "model.n_embd=512"};
  auto peak_kb_of = [&](const std::vector<std::string>& sizes, const std::string& dir) -> long {
    const test::CliResult r =
        test::run_tokamak(QStringList{"train", "--no-store"} + test::set_args(common) + test::set_args(sizes) +
                              test::set_args({"checkpoint.dir=" + env.path(dir)}),
                          {}, 600000);
    if (r.code != 0) {
      qWarning("%s", r.err.constData());
      return -1;
    }
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);  // the largest child waited for so far: run the smaller one first
    return u.ru_maxrss;
  };
  const long tiny_kb = peak_kb_of(tiny, "tiny"), big_kb = peak_kb_of(big, "big");
  QVERIFY(tiny_kb > 0 && big_kb > tiny_kb);
  auto estimate = [&](const std::vector<std::string>& sizes) {
    Config c;
    apply_overrides(c, common);
    apply_overrides(c, sizes);
    return static_cast<double>(estimate_memory(c).total());
  };
  const double measured = 1024.0 * static_cast<double>(big_kb - tiny_kb), estimated = estimate(big) - estimate(tiny);
  const QString report = QString("the 38M-parameter run grew the peak RSS by %1 MB; the estimate says %2 MB")
                             .arg(measured / 1e6, 0, 'f', 0)
                             .arg(estimated / 1e6, 0, 'f', 0);
  qInfo("%s", qPrintable(report));
  QVERIFY2(std::abs(estimated - measured) <= 0.35 * measured, qPrintable(report));
}

QTEST_GUILESS_MAIN(TestMemoryEstimate)
#include "test_memory_estimate.moc"

// The estimate against every peak the allocator measured on an H200 (the GPU sittings' run-store exports in
// experiments/results, GPT-2 124M to 1.5B, native and fused layers, batch 1 to 128, with and without activation
// checkpointing): in bf16 it must cover each peak and stay within 5% of it, so the memory check neither refuses
// what fits nor passes what then fails near the card's size.
void TestMemoryEstimate::estimateCoversTheGpuPeaks() {
  int checked = 0, chunks = 0;
  QStringList report;
  for (const char* name : {"gpu-h200-sitting1-runs.json", "gpu-h200-sitting2-runs.json", "gpu-h200-sitting3-runs.json",
                           "gpu-h200-sitting4-runs.json"}) {
    QFile f(QString(TOKAMAK_SOURCE_DIR) + "/experiments/results/" + name);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(f.fileName()));
    const nlohmann::json runs = nlohmann::json::parse(f.readAll().toStdString());
    for (const nlohmann::json& r : runs.is_array() ? runs : runs.at("runs")) {
      double peak = 0;
      for (const nlohmann::json& m : r.at("metrics"))
        if (m.contains("mem_peak")) peak = std::max(peak, m.at("mem_peak").get<double>());
      if (r.at("status") != "finished" || peak <= 0) continue;
      const Config c = config_from_json(r.at("config").dump());
      // These sittings' fused classifier held 1 GiB of logits a chunk (kClassifierBlockBytes); it now holds up to
      // kClassifierCudaChunkBytes, which the difference below accounts for.
      const double estimated = static_cast<double>(estimate_memory(c, kernels::kClassifierBlockBytes).total());
      const double ratio = estimated / peak;
      if (c.speed.layers == LayersKind::kFused && c.speed.precision == Precision::kBf16) {
        // Now one chunk of all B·T rows of bf16 logits up to 8 GiB (GPT-2 at batch 64: 6.6 GB, where there were
        // seven of at most 1 GiB).
        const double rows = 2.0 * c.train.batch_size * train_context(c) * static_cast<double>(padded_vocab(c.model));
        const double more = static_cast<double>(estimate_memory(c).logits -
                                                estimate_memory(c, kernels::kClassifierBlockBytes).logits);
        QCOMPARE(more, std::max(0.0, std::min(rows, double(int64_t{8} << 30)) - double(int64_t{1} << 30)));
        chunks += more > 0;
      }
      const QString line = QString("%1 %2: estimate %3 GiB, peak %4 GiB (%5)")
                               .arg(name)
                               .arg(QString::fromStdString(r.at("name").get<std::string>()))
                               .arg(estimated / (1 << 30), 0, 'f', 2)
                               .arg(peak / (1 << 30), 0, 'f', 2)
                               .arg(ratio, 0, 'f', 3);
      report << line;
      // Held to it: bf16 with the layers and attention people train with; the write-ups' early rungs (hand-written
      // layers, T×T attention scores) keep more than the formula counts (8–30% under) and are shown only.
      if (c.speed.precision != Precision::kBf16 || c.speed.attention != AttentionKind::kSdpa ||
          c.speed.layers == LayersKind::kScratch)
        continue;
      ++checked;
      QVERIFY2(ratio >= 1.0 && ratio <= 1.05, qPrintable(line));
    }
  }
  qInfo("%s", qPrintable(report.join('\n')));
  QVERIFY2(checked >= 30, qPrintable(QString::number(checked)));  // the exports' bf16 rungs were all read
  QVERIFY2(chunks >= 5, qPrintable(QString::number(chunks)));     // fused rungs whose logits pass 1 GiB
}
