// The GPU suite. Each test skips itself, saying why, where no CUDA device is visible (a CPU-only
// CI machine); on a GPU each makes real assertions: the reduced precisions follow fp32's loss over the first
// steps within a stated tolerance, every SDPA backend computes what the math one does, and the timed part of
// a step (batch copy, forward, backward, clip, fused AdamW) makes no host sync, checked with CUDA's
// sync-debug mode set to raise an error. Data parallel on one GPU: an NCCL group of one rank runs the
// reducer, ZeRO-1 and the gathered checkpoint; two ranks sharing the GPU run through Gloo with CUDA tensors.
// Rows marked cpu run in CI: the batches the GPU rows learn from are learnable, the device queries are
// safe before CUDA allocates, and a run samples under its own precision.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/module.h>
#ifdef TOKAMAK_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <QtTest>

#include <QTemporaryDir>
#include <cmath>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/choices.h"
#include "engine/base/config/config.h"
#include "engine/torch/device/cpu_setup.h"
#include "engine/torch/kernels/fp8_linear.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/math_mode.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/dist_ranks.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

constexpr int kSteps = 12;
constexpr int64_t kContext = 256;

// A small GPT-2 (4 layers, width 256, context 256) trained for kSteps on learnable batches.
struct TinyRun {
  std::string device = "cuda", precision = "fp32", sdpa_backend = "auto", layers = "native";
  int64_t batch = 8;
  bool glue = false;         // speed.fused_glue
  bool fp8 = false;          // speed.fp8
  bool check_syncs = false;  // sync-debug mode "error" around every step after the first two
};

// The batches' corpus: one random sequence of 256 ids from the whole vocabulary, repeated. Learnable twice over
// (which ids occur, and each window's continuation is in its own past), where fresh uniform tokens each step were
// not: their loss sits at ln 50257 = 10.8 whatever the model does, so "fp32 learns" could never hold.
const at::Tensor& corpus() {
  static const at::Tensor tokens = [] {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(7);
    return at::randint(0, 50257, {256}, g, at::kLong).repeat({64});  // 16,384 tokens
  }();
  return tokens;
}

// Step `step`'s batch: windows of the corpus at seeded offsets, page-locked on CUDA as the loader makes them with
// speed.pin_memory.
Batch host_batch(int64_t step, int64_t batch, bool pin) {
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(1000 + step);
  const at::Tensor starts = at::randint(0, corpus().numel() - kContext - 1, {batch}, g, at::kLong);
  std::vector<at::Tensor> rows;
  for (int64_t i = 0; i < batch; ++i) rows.push_back(corpus().narrow(0, starts[i].item<int64_t>(), kContext + 1));
  const at::Tensor tokens = at::stack(rows);
  Batch b;
  b.inputs = tokens.narrow(1, 0, kContext).contiguous();
  b.targets = tokens.narrow(1, 1, kContext).contiguous();
  if (pin) b.inputs = b.inputs.pin_memory(), b.targets = b.targets.pin_memory();
  return b;
}

#ifdef TOKAMAK_WITH_CUDA
// Sync-debug "error" for one step, off again however the step ends: a failed check must not leave every later
// test raising at its first sync.
class SyncDebugGuard {
 public:
  explicit SyncDebugGuard(bool on) : on_(on) {
    if (on_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncDebugGuard() {
    if (on_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
  }
  SyncDebugGuard(const SyncDebugGuard&) = delete;
  SyncDebugGuard& operator=(const SyncDebugGuard&) = delete;

 private:
  bool on_;
};
#endif

std::vector<double> losses(const TinyRun& run) {
  const c10::Device device = parse_device(run.device);
  Config c;
  apply_overrides(c, {"model.n_layer=4", "model.n_head=4", "model.n_embd=256", "model.context=256",
                      "speed.layers=" + run.layers, std::string("speed.fused_glue=") + (run.glue ? "true" : "false"),
                      std::string("speed.fp8=") + (run.fp8 ? "true" : "false")});
  // "auto" is what this device makes of it (bf16 on a GPU from the A100 on), as train() resolves it.
  const Precision precision = resolved_precision(parse_precision(run.precision), run.device);
  MathModeGuard modes;  // the forced TF32 and SDPA backend end with this run, whatever throws
  apply_math_mode(precision, find_choice(sdpa_backend_choices(), "speed.sdpa_backend", run.sdpa_backend).kind);
  at::manual_seed(1337);
  GPT model(GPTOptions::from_config(c.model, c.speed));
  model->to(device);
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& p : model->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamWOptions ao;
  ao.fused = true;
  AdamW adamw(named, ao);
  std::vector<at::Tensor> params = model->parameters();
  std::vector<at::Tensor> loss_on_device;
  for (int64_t step = 0; step < kSteps; ++step) {
    const Batch host = host_batch(step, run.batch, device.is_cuda());  // made before the timed part, as the loader does
#ifdef TOKAMAK_WITH_CUDA
    SyncDebugGuard syncs(run.check_syncs && step >= 2);  // the first steps warm up allocator and autotuning
#endif
    adamw.zero_grad();
    StepOutput out = forward_backward(
        *model,
        [&](int64_t) {
          return Batch{host.inputs.to(device, /*non_blocking=*/true), host.targets.to(device, /*non_blocking=*/true)};
        },
        1, precision, device);
    clip_grad_norm(params, 1.0);
    adamw.step(1e-3);
    loss_on_device.push_back(out.loss.detach());
  }
  std::vector<double> result;
  for (const at::Tensor& l : loss_on_device) result.push_back(l.item<double>());
  return result;
}

QString describe(const std::vector<double>& l) {
  QStringList s;
  for (double v : l) s << QString::number(v, 'f', 3);
  return s.join(' ');
}

bool no_gpu() { return cuda_device_count() == 0; }

// Data-parallel ranks on cuda:0 against one process on cuda:0 with all their batches (tests/support/dist_ranks):
// losses to 1e-5 and weights to 1e-4 (sums of the same numbers in another order, in fp32).
void ranks_equal_one_process(const test::RanksOptions& o) {
  const ModelConfig m = test::tiny_model(65);  // a parameter count no even split fits
  const auto batch = [&](int64_t step, int rank) { return test::random_batch(m.vocab_size, step, rank); };
  const test::RanksResult got = test::train_ranks(m, o, batch);
  QVERIFY2(got.error.empty(), got.error.c_str());
  const test::RanksResult want = test::train_one(m, o.world, o.steps, o.device, batch);
  QCOMPARE(got.losses.size(), want.losses.size());
  for (size_t i = 0; i < want.losses.size(); ++i)
    QVERIFY2(std::abs(got.losses[i] - want.losses[i]) < 1e-5 * want.losses[i],
             qPrintable(QString("step %1: %2 vs %3").arg(i).arg(got.losses[i]).arg(want.losses[i])));
  std::string where;
  double diff = test::largest_difference(want.weights, got.weights, &where);
  QVERIFY2(diff < 1e-4, qPrintable(QString("weights: %1 at %2").arg(diff).arg(QString::fromStdString(where))));
  if (o.checkpoint.empty()) return;
  // The checkpoint (gathered from the shards with ZeRO-1) is the one process's model and AdamW state.
  GPT loaded(GPTOptions::from_config(m, SpeedConfig{}));
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& p : loaded->named_parameters()) named.emplace_back(p.key(), p.value());
  AdamW adamw(named, AdamWOptions{});
  load_checkpoint(o.checkpoint, *loaded, &adamw, false, c10::kCPU);
  std::map<std::string, at::Tensor> state;
  adamw.for_each_state([&](const std::string& name, at::Tensor& mean, at::Tensor& sq, at::Tensor& steps) {
    state["exp_avg." + name] = mean, state["exp_avg_sq." + name] = sq;
    QCOMPARE(steps.item<float>(), float(o.steps));
  });
  diff = test::largest_difference(want.state, state, &where);
  QVERIFY2(diff < 1e-5, qPrintable(QString("state: %1 at %2").arg(diff).arg(QString::fromStdString(where))));
}

}  // namespace

class TestGpu : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { test::disable_flight_recorder(); }  // before any process group (dist_ranks.h)

  // First, before anything here allocates on a GPU: the peak-memory reset every bench rung makes and the memory
  // query of every report step must not throw where CUDA's caching allocator is not set up yet (it threw "did you
  // call init?", failing every rung), nor where there is no GPU at all.
  void deviceQueriesAreSafeBeforeCudaAllocates() {
    const c10::Device gpu(c10::kCUDA, 0);
    reset_peak_memory(gpu);
    const MemoryUse before = memory_use(gpu);
    if (no_gpu()) {
#ifdef TOKAMAK_WITH_CUDA
      QCOMPARE(before.allocated, int64_t(0));
      QCOMPARE(before.peak, int64_t(0));
#endif
      return;
    }
    const int64_t bytes = int64_t(64) << 20;
    {
      at::Tensor t = at::empty({bytes}, at::TensorOptions().device(gpu).dtype(at::kByte));
      const MemoryUse held = memory_use(gpu);
      QVERIFY2(
          held.allocated >= bytes && held.peak >= bytes && held.reserved >= bytes,
          qPrintable(
              QString("allocated %1, peak %2, reserved %3").arg(held.allocated).arg(held.peak).arg(held.reserved)));
    }
    reset_peak_memory(gpu);
    QVERIFY2(memory_use(gpu).peak < bytes, "the reset takes the peak back to what is allocated now");
  }

  // The batches the GPU rows compare on are learnable: fp32 itself must learn on them, or "follows fp32" says
  // nothing. The cpu row runs the same check in CI (a smaller batch).
  void learnableBatchesTeachFp32_data() {
    QTest::addColumn<QString>("device");
    QTest::addColumn<qint64>("batch");
    QTest::newRow("cpu") << "cpu" << qint64(2);
    QTest::newRow("cuda") << "cuda" << qint64(8);
  }
  void learnableBatchesTeachFp32() {
    QFETCH(QString, device);
    QFETCH(qint64, batch);
    if (device == "cuda" && no_gpu())
      QSKIP("no CUDA device visible: this row runs on a GPU machine (scripts/gpu-check.sh)");
    TinyRun run;
    run.device = device.toStdString(), run.batch = batch;
    const std::vector<double> l = losses(run);
    qInfo("%s fp32 losses: %s", qPrintable(device), qPrintable(describe(l)));
    QCOMPARE(int(l.size()), kSteps);
    for (double v : l) QVERIFY2(std::isfinite(v), qPrintable(describe(l)));
    QVERIFY2(l.front() > 10.0 && l.front() < 11.5, qPrintable("starts near ln 50257: " + describe(l)));
    QVERIFY2(l.back() < l.front() - 1.0, qPrintable("fp32 must learn on these batches: " + describe(l)));
  }

  // Autocast and TF32 change rounding, not what is learned: each of the first kSteps losses stays within 2%
  // of fp32's (bf16 keeps 8 mantissa bits; the loss starts near ln(50257) = 10.8). "auto" is resolved as train()
  // resolves it (bf16 on an A100 or later), so its row compares something.
  void reducedPrecisionFollowsFp32_data() {
    QTest::addColumn<QString>("precision");
    for (const ChoiceInfo& row : choices_of("speed.precision"))
      if (row.value != "fp32" && row.value != "bf16-pure" && row.missing.empty())
        QTest::newRow(row.value.c_str()) << QString::fromStdString(row.value);
  }
  void reducedPrecisionFollowsFp32() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(QString, precision);
    QVERIFY2(resolved_precision(parse_precision(precision.toStdString()), "cuda") != Precision::kFp32,
             qPrintable(precision + " resolves to fp32 on this GPU: the row would compare fp32 with itself"));
    const std::vector<double> fp32 = losses({});
    TinyRun run;
    run.precision = precision.toStdString();
    const std::vector<double> other = losses(run);
    QCOMPARE(other.size(), fp32.size());
    QVERIFY2(fp32.back() < fp32.front() - 1.0,
             qPrintable("fp32 itself must learn on these batches: " + describe(fp32)));
    for (size_t i = 0; i < fp32.size(); ++i)
      QVERIFY2(std::abs(other[i] - fp32[i]) <= 0.02 * fp32[i],
               qPrintable(QString("step %1: %2 %3 vs fp32 %4").arg(i).arg(precision).arg(other[i]).arg(fp32[i])));
  }

  // speed.layers=fused (the classifier's CUDA kernels: cross-entropy and its gradient in place, in chunks) learns
  // what native learns: the same sums in another order, so every loss of kSteps within 1e-4 relative of native's
  // in fp32 and within 1% in bf16 autocast (where both round their products to bf16).
  void fusedLayersFollowNative_data() {
    QTest::addColumn<QString>("precision");
    QTest::newRow("fp32") << "fp32";
    QTest::newRow("bf16") << "bf16";
  }
  void fusedLayersFollowNative() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(QString, precision);
    TinyRun run;
    run.precision = precision.toStdString();
    const std::vector<double> native = losses(run);
    run.layers = "fused";
    const std::vector<double> fused = losses(run);
    qInfo("native %s\nfused  %s", qPrintable(describe(native)), qPrintable(describe(fused)));
    QCOMPARE(fused.size(), native.size());
    QVERIFY2(native.back() < native.front() - 1.0,
             qPrintable("native must learn on these batches: " + describe(native)));
    const double tolerance = precision == "fp32" ? 1e-4 : 1e-2;
    for (size_t i = 0; i < native.size(); ++i)
      QVERIFY2(
          std::abs(fused[i] - native[i]) <= tolerance * native[i],
          qPrintable(
              QString("step %1: fused %2 vs native %3").arg(i).arg(fused[i], 0, 'g', 9).arg(native[i], 0, 'g', 9)));
  }

  // speed.fused_glue (bf16 activations between the fused kernels, no casts; each residual add inside the next
  // LayerNorm's kernel, across the block boundary; the heads' gradients in one pass; the GELU backward out of place)
  // trains as the fused layers do: 20 steps' losses within 1% in bf16.
  void fusedGlueFollowsFused() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    TinyRun run;
    run.precision = "bf16", run.layers = "fused";
    const std::vector<double> fused = losses(run);
    run.glue = true;
    const std::vector<double> glue = losses(run);
    qInfo("fused %s\nglue  %s", qPrintable(describe(fused)), qPrintable(describe(glue)));
    QCOMPARE(glue.size(), fused.size());
    QVERIFY2(fused.back() < fused.front() - 1.0, qPrintable("fused must learn on these batches: " + describe(fused)));
    for (size_t i = 0; i < fused.size(); ++i)
      QVERIFY2(
          std::abs(glue[i] - fused[i]) <= 0.01 * fused[i],
          qPrintable(QString("step %1: glue %2 vs fused %3").arg(i).arg(glue[i], 0, 'g', 9).arg(fused[i], 0, 'g', 9)));
  }

  // speed.fp8 (the MLP's matmuls in fp8: e4m3 forward, e5m2 gradients, tensorwise scales) learns as bf16 does: 12
  // steps' losses within 3% of bf16's (fp8 rounds 4-8× coarser than bf16 per element; same seed and batches).
  void fp8FollowsBf16() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    const std::string refused = kernels::fp8_matmul_problem(parse_device("cuda"));
    if (!refused.empty()) QSKIP(refused.c_str());
    TinyRun run;
    run.precision = "bf16", run.layers = "fused";
    const std::vector<double> bf16 = losses(run);
    run.fp8 = true;
    const std::vector<double> fp8 = losses(run);
    qInfo("bf16 %s\nfp8  %s", qPrintable(describe(bf16)), qPrintable(describe(fp8)));
    QVERIFY2(fp8.back() < fp8.front() - 1.0, qPrintable("fp8 must learn on these batches: " + describe(fp8)));
    for (size_t i = 0; i < bf16.size(); ++i)
      QVERIFY2(std::abs(fp8[i] - bf16[i]) <= 0.03 * bf16[i],
               qPrintable(QString("step %1: fp8 %2 vs bf16 %3").arg(i).arg(fp8[i], 0, 'g', 9).arg(bf16[i], 0, 'g', 9)));
  }

  // A run samples under its own precision: with flash or cuDNN attention forced, the samples' attention gets
  // the bf16 inputs those need and the math backend for the KV cache's shapes, and the forced backend is
  // what the run left set afterwards (the sampling's change does not leak). The cpu row runs the same path.
  void samplesRunUnderTheRunsPrecision_data() {
    QTest::addColumn<QString>("device");
    QTest::addColumn<QString>("backend");
    QTest::newRow("cpu, math") << "cpu"
                               << "math";
    QTest::newRow("cuda, flash") << "cuda"
                                 << "flash";
    QTest::newRow("cuda, cudnn") << "cuda"
                                 << "cudnn";
  }
  void samplesRunUnderTheRunsPrecision() {
    QFETCH(QString, device);
    QFETCH(QString, backend);
    if (device == "cuda" && no_gpu())
      QSKIP("no CUDA device visible: this row runs on a GPU machine (scripts/gpu-check.sh)");
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    MathModeGuard modes;  // the run's forced backend ends with this test
    Config c;
    apply_overrides(c, test::tiny_run_overrides({"device=" + device.toStdString(), "speed.precision=bf16",
                                                 "speed.attention=sdpa", "speed.sdpa_backend=" + backend.toStdString(),
                                                 "data.path=" + env.corpus_excerpt(100000), "train.steps=2",
                                                 "train.batch_size=2", "eval.every=0", "sample.every=1",
                                                 "sample.tokens=8", "checkpoint.dir=" + env.path("ckpt")}));
    test::RecordingSink rec;
    train(c, rec);
    QVERIFY2(rec.end.status == "finished", rec.end.error.c_str());
    QCOMPARE(int(rec.samples.size()), 2);
    QVERIFY(!rec.samples.front().text.empty());
    QCOMPARE(at::globalContext().userEnabledMathSDP(), backend == "math");
    QCOMPARE(at::globalContext().userEnabledFlashSDP(), backend == "flash");
  }

  // speed.cuda_graphs: the step captured once and replayed trains as the eager step does — the losses of 20 steps
  // bit for bit, wherever two eager runs agree bit for bit (they do unless a kernel of the step is
  // nondeterministic on this GPU; then within a stated tolerance, and the test says whether it was bit for bit).
  void cudaGraphsFollowEager_data() {
    QTest::addColumn<QString>("layers");
    QTest::addColumn<bool>("glue");  // speed.fused_glue, with two blocks: a boundary for the residual to cross
    QTest::newRow("native") << "native" << false;
    QTest::newRow("fused") << "fused" << false;
    QTest::newRow("fused glue") << "fused" << true;
  }
  void cudaGraphsFollowEager() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(QString, layers);
    QFETCH(bool, glue);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    MathModeGuard modes;
    const std::string corpus = env.corpus_excerpt(200000);
    const auto run = [&](bool graphs) {
      Config c;
      apply_overrides(
          c, test::tiny_run_overrides({"device=cuda", "speed.precision=bf16", "speed.layers=" + layers.toStdString(),
                                       "speed.fused_adamw=true", "data.path=" + corpus, "train.steps=20",
                                       "train.log_every=1", "train.batch_size=4", "eval.every=0", "sample.every=-1",
                                       "speed.cuda_graphs=" + std::string(graphs ? "true" : "false"),
                                       "speed.fused_glue=" + std::string(glue ? "true" : "false"),
                                       "model.n_layer=" + std::string(glue ? "2" : "1")}));
      test::RecordingSink rec;
      TrainControl control;
      control.checkpoints = false;
      train(c, rec, &control);
      return rec;
    };
    const test::RecordingSink eager_run = run(false), again_run = run(false), graphed_run = run(true);
    QVERIFY2(eager_run.end.status == "finished", eager_run.end.error.c_str());
    QVERIFY2(graphed_run.end.status == "finished", graphed_run.end.error.c_str());
    const std::vector<double> eager = eager_run.losses(), again = again_run.losses(), graphed = graphed_run.losses();
    QCOMPARE(int(graphed.size()), 20);
    QCOMPARE(graphed.size(), eager.size());
    QVERIFY2(eager.back() < eager.front(), "the eager run must learn");
    double spread = 0;
    for (size_t i = 0; i < eager.size(); ++i) spread = std::max(spread, std::abs(eager[i] - again[i]));
    qInfo("eager  %s\ngraphed %s\neager vs eager: %g", qPrintable(describe(eager)), qPrintable(describe(graphed)),
          spread);
    // Bit for bit where the eager step is (the learning rate reaches the fused AdamW kernel as the same float bits
    // in both modes). Where it is not (the glue's backward sums its weight and bias gradients with atomics), within
    // 1e-4 of the loss, or twice the eager runs' own spread if that is larger.
    bool same = true;
    for (size_t i = 0; i < eager.size(); ++i) same = same && graphed[i] == eager[i];
    qInfo("graphed vs eager: %s", same ? "bit for bit" : "not bit for bit");
    for (size_t i = 0; i < eager.size(); ++i)
      QVERIFY2(spread == 0 ? graphed[i] == eager[i]
                           : std::abs(graphed[i] - eager[i]) <= std::max(2 * spread, 1e-4 * std::abs(eager[i])),
               qPrintable(QString("step %1: graphed %2 vs eager %3 (two eager runs differ by %4)")
                              .arg(i + 1)
                              .arg(graphed[i], 0, 'g', 17)
                              .arg(eager[i], 0, 'g', 17)
                              .arg(spread)));
  }

  // Each backend speed.sdpa_backend can force computes attention as the math reference does (bf16: 2%).
  void sdpaBackendsAgree_data() {
    QTest::addColumn<QString>("backend");
    for (const ChoiceInfo& row : choices_of("speed.sdpa_backend"))
      if (row.value != "math") QTest::newRow(row.value.c_str()) << QString::fromStdString(row.value);
  }
  void sdpaBackendsAgree() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(QString, backend);
    TinyRun math;
    math.precision = "bf16", math.sdpa_backend = "math";
    TinyRun other = math;
    other.sdpa_backend = backend.toStdString();
    const std::vector<double> a = losses(math), b = losses(other);
    for (size_t i = 0; i < a.size(); ++i)
      QVERIFY2(std::abs(a[i] - b[i]) <= 0.02 * a[i],
               qPrintable(QString("step %1: %2 %3 vs math %4").arg(i).arg(backend).arg(b[i]).arg(a[i])));
  }

  // NCCL with one rank: the reducer (all-reduce, or ZeRO-1's reduce-scatter + sharded AdamW + all-gather) and
  // the checkpoint gathered from the shards, on CUDA tensors.
  void ncclGroupOfOneRunsTheWholePath_data() {
    QTest::addColumn<bool>("zero");
    QTest::newRow("all-reduce") << false;
    QTest::newRow("ZeRO-1") << true;
  }
  void ncclGroupOfOneRunsTheWholePath() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(bool, zero);
    QTemporaryDir dir;
    test::RanksOptions o;
    o.world = 1, o.device = c10::Device(c10::kCUDA, 0), o.zero = zero, o.steps = 4;
    o.checkpoint = dir.filePath("step_4.safetensors").toStdString();
    ranks_equal_one_process(o);
  }

  // Two ranks on the one GPU (NCCL refuses two ranks per device; the trainer picks Gloo then): Gloo moves the
  // CUDA buckets through host memory, and the ranks equal one process with both batches.
  void twoGlooRanksShareOneGpu_data() {
    QTest::addColumn<bool>("zero");
    QTest::newRow("all-reduce") << false;
    QTest::newRow("ZeRO-1") << true;
  }
  void twoGlooRanksShareOneGpu() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
    QFETCH(bool, zero);
    QTemporaryDir dir;
    test::RanksOptions o;
    o.world = 2, o.device = c10::Device(c10::kCUDA, 0), o.backend = Backend::kGloo, o.zero = zero, o.steps = 4;
    o.checkpoint = dir.filePath("step_4.safetensors").toStdString();
    ranks_equal_one_process(o);
  }

  // No host sync between reports: a synchronizing call inside a timed step raises under sync-debug "error".
  void timedStepsMakeNoHostSync() {
    if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)");
#ifndef TOKAMAK_WITH_CUDA
    QSKIP("LibTorch is not a CUDA build");
#else
    TinyRun run;
    run.precision = "bf16", run.check_syncs = true;
    std::vector<double> l;
    try {
      l = losses(run);
    } catch (const std::exception& e) {
      QFAIL(qPrintable(QString::fromStdString(std::string(e.what()).substr(0, 300))));
    }
    QCOMPARE(int(l.size()), kSteps);
    QVERIFY(std::isfinite(l.back()));
#endif
  }
};

QTEST_GUILESS_MAIN(TestGpu)
#include "test_gpu.moc"
