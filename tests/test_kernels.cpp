// Tokamak's own kernels (engine/torch/kernels/) against their plain-ATen references: the CPU fused
// classifier's loss and both gradients (vocabulary padding, ignored targets, uneven chunks), the model with
// speed.layers=fused against native, and the tiny run's first losses. Tolerances follow llm.c's dev/cuda habit:
// |fused - reference| <= abs + rel·|reference| per element, stated at each check. The CUDA kernels' parity
// tests skip, saying so, where no CUDA device is visible.
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#ifdef TOKAMAK_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <QtTest>

#include <cmath>
#include <functional>

#include "engine/base/config/config.h"
#include "engine/torch/device/device.h"
#include "engine/torch/kernels/bias_gelu.h"
#include "engine/torch/kernels/classifier.h"
#include "engine/torch/kernels/qkv_heads.h"
#include "engine/torch/kernels/reference.h"
#include "engine/torch/kernels/residual_layernorm.h"
#include "engine/torch/model/autocast.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

// The largest |a - b| - rel·|b| over the elements: <= abs_tol means every element is within abs + rel·|ref|.
double excess(const at::Tensor& a, const at::Tensor& b, double rel) {
  at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  return ((ad - bd).abs() - rel * bd.abs()).max().item<double>();
}

struct ClassifierCase {
  at::Tensor x, weight, targets;  // (N, C), (Vp, C), (N,)
  int64_t vocab_size;
};

ClassifierCase make_case(int64_t N, int64_t C, int64_t Vp, int64_t V, int64_t ignored, uint64_t seed) {
  at::manual_seed(seed);
  ClassifierCase c{at::randn({N, C}), at::randn({Vp, C}) * 0.2, at::randint(0, V, {N}, at::kLong), V};
  if (Vp > V) c.weight.narrow(0, V, Vp - V).zero_();  // the model keeps padded rows zero
  for (int64_t i = 0; i < ignored; ++i) c.targets[(i * 7) % N] = kernels::kIgnoreIndex;
  return c;
}

struct Grads {
  at::Tensor loss, dx, dweight;
};

// loss · g backpropagated; g != 1 checks that backward scales by the incoming gradient.
template <class F>
Grads grads_of(const ClassifierCase& c, F loss_fn, double g) {
  at::Tensor x = c.x.clone().requires_grad_(), w = c.weight.clone().requires_grad_();
  at::Tensor loss = loss_fn(x, w);
  (loss * g).backward();
  return {loss.detach(), x.grad(), w.grad()};
}

bool no_gpu() { return cuda_device_count() == 0; }
#define SKIP_WITHOUT_GPU() \
  if (no_gpu()) QSKIP("no CUDA device visible: this test runs on a GPU machine (scripts/gpu-check.sh)")

// llm.c's dev/cuda tolerance, scaled by dtype: fp32 1e-5 + 1e-4·|ref|; bf16 (8 mantissa bits, and the
// gradients are rounded to bf16 once more) 1e-2·max|ref| + 5e-2·|ref|. Checked against the fp32 reference.
bool close(const at::Tensor& got, const at::Tensor& ref, at::ScalarType dtype, QString* why) {
  const at::Tensor g = got.to(at::kCPU).to(at::kDouble), r = ref.to(at::kCPU).to(at::kDouble);
  const double scale = r.abs().max().item<double>();
  const double abs_tol = dtype == at::kBFloat16 ? 1e-2 * scale : 1e-5, rel = dtype == at::kBFloat16 ? 5e-2 : 1e-4;
  const double over = ((g - r).abs() - rel * r.abs()).max().item<double>();
  *why = QString("max excess %1 over %2 (max |ref| %3)").arg(over).arg(abs_tol).arg(scale);
  return over <= abs_tol && scale > 0;
}

// Runs f on (requires-grad copies of) inputs, backpropagates `seeds` through its outputs (sum of
// output·seed), and returns the outputs followed by every input's gradient.
template <class F>
std::vector<at::Tensor> outputs_and_grads(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& seeds,
                                          F f) {
  std::vector<at::Tensor> leaves;
  for (const at::Tensor& t : inputs) leaves.push_back(t.detach().clone().requires_grad_());
  std::vector<at::Tensor> outs = f(leaves);
  at::Tensor total = at::zeros({}, outs[0].options().dtype(at::kFloat));
  for (size_t i = 0; i < outs.size(); ++i) total = total + (outs[i].to(at::kFloat) * seeds[i]).sum();
  total.backward();
  std::vector<at::Tensor> all;
  for (const at::Tensor& o : outs) all.push_back(o.detach());
  for (const at::Tensor& l : leaves) all.push_back(l.grad());
  return all;
}

// CUDA's sync-debug mode set to raise on any synchronising call for the guard's scope (as test_gpu does).
struct CudaSyncCheck {
#ifdef TOKAMAK_WITH_CUDA
  CudaSyncCheck() { c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR); }
  ~CudaSyncCheck() { c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED); }
#endif
};

QString dtype_row(at::ScalarType t) { return t == at::kBFloat16 ? "bf16" : "fp32"; }

std::vector<double> tiny_run_losses(const std::string& data, const std::string& layers) {
  Config c;
  apply_overrides(
      c, test::two_block_run_overrides(data, {"train.steps=8", "speed.precision=fp32", "speed.layers=" + layers}));
  test::RecordingSink sink;
  const EndEvent end = train(c, sink);
  if (end.status != "finished") return {};
  return sink.losses();
}

}  // namespace

class TestKernels : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Loss and both gradients against linear + narrow + cross_entropy. fp32 tolerance: 1e-5 + 1e-4·|ref| per
  // element (the chunked sums add in another order; values are O(1)). Padded rows of dweight are exactly zero,
  // as native's narrow gives them.
  void classifierMatchesReference_data() {
    QTest::addColumn<int>("N");
    QTest::addColumn<int>("C");
    QTest::addColumn<int>("Vp");
    QTest::addColumn<int>("V");
    QTest::addColumn<int>("chunk");
    QTest::addColumn<int>("ignored");
    QTest::addColumn<double>("g");
    QTest::addColumn<int>("blockRows");  // rows of gradients per weight-gradient matmul; 0 = the default (all)
    QTest::newRow("one chunk, no padding") << 64 << 32 << 300 << 300 << 0 << 0 << 1.0 << 0;
    QTest::newRow("padded vocab, uneven chunks") << 70 << 32 << 320 << 301 << 16 << 0 << 1.0 << 0;
    QTest::newRow("chunks of one token") << 9 << 16 << 64 << 50 << 1 << 0 << 1.0 << 0;
    QTest::newRow("ignored targets, scaled gradient") << 70 << 32 << 320 << 301 << 16 << 5 << 0.25 << 0;
    QTest::newRow("three weight-gradient blocks") << 70 << 32 << 320 << 301 << 16 << 5 << 1.0 << 32;
    QTest::newRow("a block per chunk, scaled") << 40 << 16 << 64 << 50 << 8 << 3 << 0.5 << 8;
  }
  void classifierMatchesReference() {
    QFETCH(int, N);
    QFETCH(int, C);
    QFETCH(int, Vp);
    QFETCH(int, V);
    QFETCH(int, chunk);
    QFETCH(int, ignored);
    QFETCH(double, g);
    QFETCH(int, blockRows);
    const int64_t block_bytes = int64_t{blockRows} * V * 4;  // fp32 rows
    const ClassifierCase c = make_case(N, C, Vp, V, ignored, 7);
    const Grads ref = grads_of(
        c, [&](const at::Tensor& x, const at::Tensor& w) { return kernels::classifier_reference(x, w, c.targets, V); },
        g);
    const Grads fused = grads_of(
        c,
        [&](const at::Tensor& x, const at::Tensor& w) {
          return kernels::fused_classifier(x, w, c.targets, {c.vocab_size, chunk, block_bytes});
        },
        g);
    QVERIFY2(excess(fused.loss, ref.loss, 1e-4) <= 1e-5,
             qPrintable(QString("loss %1 vs %2").arg(fused.loss.item<double>()).arg(ref.loss.item<double>())));
    QVERIFY2(excess(fused.dx, ref.dx, 1e-4) <= 1e-5,
             qPrintable(QString("dx off by %1").arg(excess(fused.dx, ref.dx, 0))));
    QVERIFY2(excess(fused.dweight, ref.dweight, 1e-4) <= 1e-5,
             qPrintable(QString("dweight off by %1").arg(excess(fused.dweight, ref.dweight, 0))));
    QVERIFY(ref.dx.abs().max().item<double>() > 1e-3);  // the comparison is not between two zeros
    if (Vp > V) QCOMPARE(fused.dweight.narrow(0, V, Vp - V).abs().max().item<double>(), 0.0);
    if (ignored) {  // an ignored token's row gets no gradient, as in the reference
      QCOMPARE(fused.dx[0].abs().max().item<double>(), 0.0);
      QVERIFY(c.targets[0].item<int64_t>() == kernels::kIgnoreIndex);
    }
  }

  // Under bf16 autocast (speed.precision=bf16 on a CPU) the fused classifier's matmuls run in bf16, as the
  // reference's linear does there; softmax and loss stay fp32. Tolerances are bf16's: its 8-bit mantissa gives
  // each logit ~0.4% error, which the two sides round differently (per chunk here, over all N there).
  void classifierMatchesReferenceInBf16_data() {
    QTest::addColumn<int>("blockRows");  // rows of bf16 gradients per weight-gradient matmul; 0 = all
    QTest::newRow("one weight-gradient block") << 0;
    QTest::newRow("three blocks") << 32;
  }
  void classifierMatchesReferenceInBf16() {
    QFETCH(int, blockRows);
    const ClassifierCase c = make_case(70, 32, 320, 301, 5, 11);
    AutocastGuard bf16(c10::DeviceType::CPU, true, at::kBFloat16);
    const auto reference = [&](const at::Tensor& x, const at::Tensor& w) {
      return kernels::classifier_reference(x, w, c.targets, c.vocab_size);
    };
    const auto fused = [&](const at::Tensor& x, const at::Tensor& w) {
      return kernels::fused_classifier(x, w, c.targets, {c.vocab_size, 16, int64_t{blockRows} * 301 * 2});
    };
    const Grads ref = grads_of(c, reference, 0.5), got = grads_of(c, fused, 0.5);
    QCOMPARE(got.dx.scalar_type(), at::kFloat);  // gradients in the inputs' dtype, as autograd's
    QVERIFY2(excess(got.loss, ref.loss, 1e-2) <= 1e-3,
             qPrintable(QString("loss %1 vs %2").arg(got.loss.item<double>()).arg(ref.loss.item<double>())));
    const double dx_scale = ref.dx.abs().max().item<double>(), dw_scale = ref.dweight.abs().max().item<double>();
    QVERIFY(dx_scale > 1e-3 && dw_scale > 1e-3);  // not two zeros
    QVERIFY2(excess(got.dx, ref.dx, 2e-2) <= 2e-2 * dx_scale,
             qPrintable(QString("dx off by %1 of %2").arg(excess(got.dx, ref.dx, 0)).arg(dx_scale)));
    QVERIFY2(excess(got.dweight, ref.dweight, 2e-2) <= 2e-2 * dw_scale,
             qPrintable(QString("dweight off by %1 of %2").arg(excess(got.dweight, ref.dweight, 0)).arg(dw_scale)));
    QCOMPARE(got.dweight.narrow(0, 301, 19).abs().max().item<double>(), 0.0);  // padded rows untouched
    // and it is not the fp32 computation: bf16 rounding shows against an fp32 run of the same inputs
    AutocastGuard off(c10::DeviceType::CPU, false);
    const Grads fp32 = grads_of(c, fused, 0.5);
    QVERIFY((fp32.dx - got.dx).abs().max().item<double>() > 0);
  }

  // Evaluation (no gradients wanted) gives the same loss and computes no gradient.
  void classifierWithoutGradientsGivesTheLoss() {
    const ClassifierCase c = make_case(40, 16, 128, 100, 0, 3);
    const at::Tensor ref = kernels::classifier_reference(c.x, c.weight, c.targets, 100);
    at::NoGradGuard no_grad;
    const at::Tensor loss = kernels::fused_classifier(c.x, c.weight, c.targets, {100, 8});
    QVERIFY(!loss.requires_grad());
    QVERIFY2(excess(loss, ref, 1e-5) <= 1e-6, qPrintable(QString::number(loss.item<double>())));
  }

  // A target outside the real vocabulary (a padded column among them) is a one-line error, as native's is.
  void targetOutsideTheVocabularyIsRefused() {
    ClassifierCase c = make_case(8, 16, 64, 50, 0, 5);
    c.targets[3] = 55;  // a padded row: never a valid prediction
    const QString e = test::error_of([&] { kernels::fused_classifier(c.x, c.weight, c.targets, {50, 4}); });
    QVERIFY2(e.contains("target 55 is outside the vocabulary [0, 50)") && !e.contains('\n'), qPrintable(e));
  }

  // The model with speed.layers=fused: the same loss and the same gradient for every parameter as native, with
  // vocabulary padding (padded embedding rows get no gradient) and a tied head. fp32: 1e-5 + 1e-4·|ref|.
  void fusedModelMatchesNative() {
    ModelConfig m = test::tiny_model(/*vocab_size=*/60);
    m.vocab_pad_multiple = 64;
    SpeedConfig native_opt, fused_opt;
    fused_opt.layers = LayersKind::kFused;
    at::manual_seed(21);
    GPT native(GPTOptions::from_config(m, native_opt));
    GPT fused(GPTOptions::from_config(m, fused_opt));
    {
      at::NoGradGuard no_grad;
      auto fp = fused->named_parameters();
      for (const auto& p : native->named_parameters()) fp[p.key()].copy_(p.value());
    }
    const at::Tensor tokens = at::randint(0, 60, {4, 17}, at::kLong);
    const at::Tensor in = tokens.narrow(1, 0, 16).contiguous(), out = tokens.narrow(1, 1, 16).contiguous();
    const at::Tensor ln = native->forward(in, out).loss, lf = fused->forward(in, out).loss;
    QVERIFY(!fused->forward(in, out).logits.defined());  // the logits are never materialised
    QVERIFY2(excess(lf, ln, 1e-5) <= 1e-6,
             qPrintable(QString("%1 vs %2").arg(lf.item<double>()).arg(ln.item<double>())));
    ln.backward(), lf.backward();
    auto fp = fused->named_parameters();
    for (const auto& p : native->named_parameters()) {
      const at::Tensor& gn = p.value().grad();
      const at::Tensor& gf = fp[p.key()].grad();
      QVERIFY2(gf.defined() && excess(gf, gn, 1e-4) <= 1e-5,
               qPrintable(QString::fromStdString(p.key()) + QString(": %1").arg(excess(gf, gn, 0))));
    }
    QCOMPARE(fp["wte.weight"].grad().narrow(0, 60, 4).abs().max().item<double>(), 0.0);
    at::NoGradGuard no_grad;  // sampling still gets logits from a fused model
    QCOMPARE(fused->forward(in).logits.size(-1), 60);
  }

  // The speed-up's loss check: the tiny run's first 8 losses with speed.layers=fused stay within 1e-4 (absolute,
  // losses ~10.8 → ~9) of native's. Only the order of float sums differs, so the curves must coincide.
  void fusedTinyRunFollowsNative() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const std::string data = env.corpus_excerpt(40000);
    const std::vector<double> native = tiny_run_losses(data, "native"), fused = tiny_run_losses(data, "fused");
    QCOMPARE(int(native.size()), 8);
    QCOMPARE(int(fused.size()), 8);
    QVERIFY(native.back() < native.front());  // it learns, so the comparison is between moving curves
    for (int i = 0; i < 8; ++i)
      QVERIFY2(
          std::abs(fused[i] - native[i]) < 1e-4,
          qPrintable(
              QString("step %1: fused %2, native %3").arg(i + 1).arg(fused[i], 0, 'g', 9).arg(native[i], 0, 'g', 9)));
  }

  // The CUDA kernels (engine/torch/kernels/*.cu) against the fp32 reference on the same GPU, fp32 and bf16 inputs.
  void cudaKernelsMatchReferences_data() {
    QTest::addColumn<QString>("kernel");
    QTest::addColumn<int>("dtypeInt");
    QTest::addColumn<int>("width");  // C
    // "glue" and "out of place": speed.fused_glue's kernels (in bf16; the fp32 rows check that they fall back).
    for (const char* kernel : {"classifier", "classifier unpadded", "classifier wide", "residual_layernorm", "bias_gelu",
                               "residual_layernorm glue", "bias_gelu out of place", "layernorm glue"})
      for (at::ScalarType t : {at::kFloat, at::kBFloat16})
        QTest::newRow(qPrintable(QString(kernel) + " " + dtype_row(t))) << QString(kernel) << int(t) << 96;
    // The glue's LayerNorm backward packs a row over the lanes: GPT-2's width (three packs a lane, every lane busy),
    // and GPT-2 XL's, past the packed kernel's widths (the element-a-lane kernel).
    for (int width : {768, 1600})
      for (const char* kernel : {"residual_layernorm glue", "layernorm glue"})
        QTest::newRow(qPrintable(QString("%1 bf16 C=%2").arg(kernel).arg(width)))
            << QString(kernel) << int(at::kBFloat16) << width;
  }
  void cudaKernelsMatchReferences() {
    SKIP_WITHOUT_GPU();
    QFETCH(QString, kernel);
    QFETCH(int, dtypeInt);
    QFETCH(int, width);
    const auto dtype = static_cast<at::ScalarType>(dtypeInt);
    const auto on_gpu = at::TensorOptions().device(at::kCUDA);
    at::manual_seed(5);
    std::vector<at::Tensor> inputs, seeds;  // fp32 on the GPU; the fused side gets them in dtype
    std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)> fused, reference;
    const int64_t N = 300, C = width;  // rows not a multiple of any block's; 96 is not a multiple of a warp's
    if (kernel.startsWith("classifier")) {
      // Padded, the kernel takes 16-byte packs (V not a multiple of one: a pack holds classes and padding) and
      // keeps the row in shared memory; unpadded (Vp = V, odd), the scalar kernel; wide, in fp32 (264 KB a row, past
      // any GPU's shared memory per block), the packed kernel that reads the row twice.
      const int64_t V = kernel == "classifier wide" ? 66000 : 1001;
      const int64_t Vp = kernel == "classifier unpadded" ? V : kernel == "classifier wide" ? 66048 : 1024;
      at::Tensor w = at::randn({Vp, C}, on_gpu) * 0.1;
      w.narrow(0, V, Vp - V).zero_();
      at::Tensor t = at::randint(0, V, {N}, on_gpu.dtype(at::kLong));
      t.narrow(0, 0, 3).fill_(kernels::kIgnoreIndex);
      inputs = {at::randn({N, C}, on_gpu), w};
      seeds = {at::full({}, 0.5, on_gpu)};
      fused = [=](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{kernels::fused_classifier(in[0].to(dtype), in[1].to(dtype), t, {V, 128})};
      };
      reference = [=](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{kernels::classifier_reference(in[0], in[1], t, V)};
      };
    } else if (kernel == "layernorm glue") {
      inputs = {at::randn({N, C}, on_gpu), 1 + 0.1 * at::randn({C}, on_gpu), 0.1 * at::randn({C}, on_gpu)};
      seeds = {at::randn({N, C}, on_gpu)};
      fused = [=](const std::vector<at::Tensor>& in) {
        // ln_1's and ln_f's dtypes: the residual stream and the parameters fp32, bf16 out. The fp32 row gives it a
        // double input, which it leaves to the library (undefined), as the model then does.
        at::Tensor y =
            kernels::layernorm_glue(in[0].to(dtype == at::kBFloat16 ? at::kFloat : at::kDouble), in[1], in[2]);
        if (!y.defined()) y = at::layer_norm(in[0], {C}, in[1], in[2], 1e-5);
        return std::vector<at::Tensor>{y};
      };
      reference = [=](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{at::layer_norm(in[0], {C}, in[1], in[2], 1e-5)};
      };
    } else if (kernel.startsWith("residual_layernorm")) {
      inputs = {at::randn({N, C}, on_gpu), at::randn({N, C}, on_gpu), 1 + 0.1 * at::randn({C}, on_gpu),
                0.1 * at::randn({C}, on_gpu)};
      seeds = {at::randn({N, C}, on_gpu), at::randn({N, C}, on_gpu)};
      const bool glue = kernel.endsWith("glue");
      fused = [=](const std::vector<at::Tensor>& in) {
        // The glue's dtypes: the residual stream stays fp32 and the LayerNorm's parameters too; the branch is dtype.
        auto [h, y] =
            glue ? kernels::residual_layernorm_glue(in[0], in[1].to(dtype), in[2], in[3])
                 : kernels::residual_layernorm(in[0].to(dtype), in[1].to(dtype), in[2].to(dtype), in[3].to(dtype));
        return std::vector<at::Tensor>{h, y};
      };
      reference = [=](const std::vector<at::Tensor>& in) {
        auto [h, y] = kernels::residual_layernorm_reference(in[0], in[1], in[2], in[3]);
        return std::vector<at::Tensor>{h, y};
      };
    } else {
      inputs = {at::randn({N, C}, on_gpu), 0.1 * at::randn({4 * C, C}, on_gpu), 0.1 * at::randn({4 * C}, on_gpu)};
      seeds = {at::randn({N, 4 * C}, on_gpu)};
      const bool out_of_place = kernel.endsWith("out of place");
      fused = [=](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{
            kernels::bias_gelu(in[0].to(dtype), in[1].to(dtype), in[2].to(dtype), out_of_place)};
      };
      reference = [=](const std::vector<at::Tensor>& in) {
        return std::vector<at::Tensor>{kernels::bias_gelu_reference(in[0], in[1], in[2])};
      };
    }
    const std::vector<at::Tensor> got = outputs_and_grads(inputs, seeds, fused);
    const std::vector<at::Tensor> ref = outputs_and_grads(inputs, seeds, reference);
    QCOMPARE(got.size(), ref.size());
    for (size_t i = 0; i < got.size(); ++i) {
      QString why;
      QVERIFY2(got[i].defined() && close(got[i], ref[i], dtype, &why),
               qPrintable(QString("%1 of %2: %3").arg(i < seeds.size() ? "output" : "gradient").arg(i).arg(why)));
    }
  }

  // speed.fused_glue's attention heads: the same views of c_attn's output as split + view + transpose, and the same
  // gradient of it, exactly (a copy), whatever layout the heads' gradients come in: contiguous (B, H, T, D) as the
  // attention gives them, (B, T, H, D) transposed, one missing. On a CPU the backward is the reference.
  void qkvHeadsAreTheSplitViews() {
    const int64_t B = 2, T = 5, H = 3, D = 8, C = H * D;
    at::manual_seed(9);
    const at::Tensor qkv = at::randn({B, T, 3 * C});
    const std::vector<at::Tensor> seeds = {at::randn({B, H, T, D}), at::randn({B, T, H, D}).transpose(1, 2),
                                           at::randn({B, H, T, D})};
    auto backprop = [&](bool ours, bool with_v) {
      at::Tensor leaf = qkv.clone().requires_grad_();
      std::array<at::Tensor, 3> heads;
      if (ours) {
        heads = kernels::qkv_heads(leaf, H);
      } else {
        auto parts = leaf.split(C, 2);
        for (int s = 0; s < 3; ++s) heads[s] = parts[s].view({B, T, H, D}).transpose(1, 2);
      }
      at::Tensor total = (heads[0] * seeds[0]).sum() + (heads[1] * seeds[1]).sum();
      if (with_v) total = total + (heads[2] * seeds[2]).sum();
      total.backward();
      return std::tuple{heads, leaf.grad(), leaf};
    };
    for (bool with_v : {true, false}) {
      auto [ours, dours, our_leaf] = backprop(true, with_v);
      auto [plain, dplain, plain_leaf] = backprop(false, with_v);
      for (int s = 0; s < 3; ++s) {
        QCOMPARE(ours[s].sizes(), plain[s].sizes());
        QCOMPARE(ours[s].strides(), plain[s].strides());
        QVERIFY(ours[s].is_alias_of(our_leaf));  // views: nothing copied forward
        QVERIFY(at::equal(ours[s], plain[s]));
      }
      QVERIFY2(at::equal(dours, dplain), with_v ? "all three heads" : "no gradient for v");
      if (!with_v) QVERIFY(at::equal(dours.narrow(2, 2 * C, C), at::zeros({B, T, C})));
    }
    QVERIFY_THROWS_EXCEPTION(std::exception, kernels::qkv_heads(at::randn({B, T, 3 * C + 1}), H));
  }

  // The heads' backward kernel on CUDA is a copy: bit for bit the reference's, in fp32 and bf16, for contiguous and
  // transposed head gradients, a missing one, and a head width whose rows are not 16 bytes (the reference then).
  void cudaQkvHeadsBackwardIsACopy_data() {
    QTest::addColumn<int>("dtypeInt");
    QTest::addColumn<int>("headDim");
    for (at::ScalarType t : {at::kFloat, at::kBFloat16})
      for (int D : {64, 12, 3}) QTest::newRow(qPrintable(dtype_row(t) + QString(" D=%1").arg(D))) << int(t) << D;
  }
  void cudaQkvHeadsBackwardIsACopy() {
    SKIP_WITHOUT_GPU();
    QFETCH(int, dtypeInt);
    QFETCH(int, headDim);
    const auto on_gpu = at::TensorOptions().device(at::kCUDA).dtype(static_cast<at::ScalarType>(dtypeInt));
    const int64_t B = 3, T = 130, H = 4, D = headDim, C = H * D;
    at::manual_seed(10);
    const at::Tensor dq = at::randn({B, H, T, D}, on_gpu), dk = at::randn({B, T, H, D}, on_gpu).transpose(1, 2);
    const at::Tensor dv = at::randn({B, H, T, D}, on_gpu);
    for (bool with_v : {true, false}) {
      const at::Tensor v = with_v ? dv : at::Tensor();
      const at::Tensor got = kernels::qkv_heads_backward(dq, dk, v, {B, T, 3 * C}, on_gpu, H);
      const at::Tensor ref = kernels::qkv_heads_backward_reference(dq, dk, v, {B, T, 3 * C}, on_gpu, H);
      QVERIFY2(at::equal(got, ref), with_v ? "all three heads" : "no gradient for v");
    }
  }

  // The fused classifier on CUDA reads nothing back to the host (the count of targets stays on the device):
  // under sync-debug "error" a forward + backward raises on any synchronising call.
  void cudaClassifierMakesNoHostSync() {
    SKIP_WITHOUT_GPU();
    const auto on_gpu = at::TensorOptions().device(at::kCUDA);
    at::Tensor x = at::randn({64, 32}, on_gpu).requires_grad_(), w = at::randn({128, 32}, on_gpu).requires_grad_();
    const at::Tensor t = at::randint(0, 100, {64}, on_gpu.dtype(at::kLong));
    kernels::fused_classifier(x, w, t, {100, 16}).backward();  // warm-up: cuBLAS handles, allocator
    x.mutable_grad() = at::Tensor(), w.mutable_grad() = at::Tensor();
    const QString error = test::error_of([&] {
      CudaSyncCheck check;
      kernels::fused_classifier(x, w, t, {100, 16}).backward();
    });
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QVERIFY(x.grad().defined() && w.grad().defined());
  }

  // The glue's forward kernels load 16 bytes at a time: views that start 4 and 2 bytes past a boundary take the
  // plain kernels instead, and give what the reference gives (memcheck in the sitting would flag a misaligned load).
  void cudaGlueTakesUnalignedViews() {
    SKIP_WITHOUT_GPU();
    const auto on_gpu = at::TensorOptions().device(at::kCUDA);
    at::manual_seed(6);
    const int64_t N = 64, C = 96;
    const at::Tensor x = at::randn({N * C + 1}, on_gpu).narrow(0, 1, N * C).view({N, C});
    const at::Tensor r = at::randn({N * C + 1}, on_gpu).to(at::kBFloat16).narrow(0, 1, N * C).view({N, C});
    const at::Tensor w = 1 + 0.1 * at::randn({C}, on_gpu), b = 0.1 * at::randn({C}, on_gpu);
    QVERIFY(reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 != 0 && reinterpret_cast<uintptr_t>(r.data_ptr()) % 16 != 0);
    at::NoGradGuard no_grad;
    const auto [h, y] = kernels::residual_layernorm_glue(x, r, w, b);
    const auto [h_ref, y_ref] = kernels::residual_layernorm_reference(x, r.to(at::kFloat), w, b);
    // Stated tolerance: bf16 rounding of the branch's sum and of y (2^-8 relative), as cudaKernelsMatchReferences.
    QVERIFY2(excess(h, h_ref, 1e-2) <= 1e-2, "residual stream");
    QVERIFY2(excess(y.to(at::kFloat), y_ref, 1e-2) <= 3e-2, "normalised output");
    const at::Tensor ln = kernels::layernorm_glue(x, w, b);
    QVERIFY(!ln.defined());  // refused: the caller's LayerNorm runs instead
  }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "test_kernels.moc"
