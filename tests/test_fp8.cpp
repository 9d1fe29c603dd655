// speed.fp8 (engine/torch/kernels/fp8_linear.h): the tensorwise scale and the fp8 round trip on a CPU (scale choice, a
// zero tensor, the formats' rounding bounds over magnitudes from 1e-6 to 1e6), the fp8 linear's forward and three
// gradients against fp32 on the CPU (LibTorch's CPU _scaled_mm serves) and on CUDA (skipped without a GPU of
// compute capability 8.9+), the device refusal, and a tiny run trained with speed.fp8 on the CPU against bf16.
// test_gpu's fp8FollowsBf16 is the GPU's run.
#include <ATen/ATen.h>
#ifdef TOKAMAK_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

#include <QtTest>

#include <cmath>

#include "engine/base/config/config.h"
#include "engine/torch/device/device.h"
#include "engine/torch/kernels/fp8_linear.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using kernels::Fp8Tensor;

namespace {

// ||a - b|| / ||b||, in double.
double relative_error(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  return ((ad - bd).norm() / bd.norm()).item<double>();
}

// Whether `device` runs fp8 matmuls: the CPU, or a GPU of compute capability 8.9+.
bool fp8_device(const QString& device) {
  if (device == "cpu") return true;
  return cuda_device_count() > 0 && kernels::fp8_matmul_problem(parse_device("cuda")).empty();
}

}  // namespace

class TestFp8 : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The scale maps a tensor's largest magnitude onto the format's largest value, exactly after the clamp, for
  // amaxes from 1e-11 to 1e30 (fp8_max / amax stays within fp32's range).
  void scaleMapsAmaxToTheFormatsLargestValue_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<double>("amax");
    for (double amax : {1e-11, 1e-6, 0.3, 1.0, 7.5, 1e6, 1e30}) {  // from just above kFp8AmaxFloor
      QTest::addRow("e4m3, amax %g", amax) << int(at::kFloat8_e4m3fn) << amax;
      QTest::addRow("e5m2, amax %g", amax) << int(at::kFloat8_e5m2) << amax;
    }
  }
  void scaleMapsAmaxToTheFormatsLargestValue() {
    QFETCH(int, dtype);
    QFETCH(double, amax);
    const auto fp8 = static_cast<at::ScalarType>(dtype);
    const double top = kernels::fp8_max(fp8);
    const at::Tensor x = at::tensor({0.25 * amax, -amax, 0.5 * amax}, at::kFloat);
    const Fp8Tensor q = kernels::quantize_fp8(x, fp8);
    QCOMPARE(q.scale.scalar_type(), at::kFloat);
    QCOMPARE(q.scale.dim(), int64_t(0));
    QVERIFY(std::abs(q.scale.item<double>() * amax / top - 1) < 1e-6);
    QCOMPARE(q.data.to(at::kFloat)[1].item<double>(), -top);  // the largest magnitude lands on the format's top
    QVERIFY(at::isfinite(kernels::dequantize_fp8(q)).all().item<bool>());
  }

  // A zero tensor (a dead layer's gradient) has a finite scale, from the amax floor, and quantizes to zeros.
  void zeroTensorHasAFiniteScale() {
    for (at::ScalarType fp8 : {at::kFloat8_e4m3fn, at::kFloat8_e5m2}) {
      const Fp8Tensor q = kernels::quantize_fp8(at::zeros({64, 32}), fp8);
      QVERIFY(std::isfinite(q.scale.item<double>()));
      QCOMPARE(q.scale.item<double>(), double(float(kernels::fp8_max(fp8) / kernels::kFp8AmaxFloor)));
      const at::Tensor back = kernels::dequantize_fp8(q);
      QVERIFY(at::isfinite(back).all().item<bool>());
      QCOMPARE(back.abs().max().item<double>(), 0.0);
    }
  }

  // Round trip x → fp8 → x within the format's rounding: per element |back - x| <= rel·|x| + abs/scale, rel half an
  // ulp (e4m3 3 mantissa bits: 2^-4; e5m2 2 bits: 2^-3) and abs half the smallest subnormal in scaled units (e4m3
  // 2^-10, e5m2 2^-17: what a value too small to be normal rounds by), with 1e-6 relative for fp32's own rounding
  // (2^-8 for a bf16 input, which is scaled in bf16 before the cast). Random normal data of each magnitude.
  void roundTripWithinTheFormatsBound_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<double>("magnitude");
    QTest::addColumn<bool>("bf16");
    for (double m : {1e-6, 1e-2, 1.0, 1e3, 1e6}) {
      QTest::addRow("e4m3, %g", m) << int(at::kFloat8_e4m3fn) << m << false;
      QTest::addRow("e5m2, %g", m) << int(at::kFloat8_e5m2) << m << false;
    }
    QTest::addRow("e4m3, bf16 input") << int(at::kFloat8_e4m3fn) << 1.0 << true;
    QTest::addRow("e5m2, bf16 input") << int(at::kFloat8_e5m2) << 1e-3 << true;
  }
  void roundTripWithinTheFormatsBound() {
    QFETCH(int, dtype);
    QFETCH(double, magnitude);
    QFETCH(bool, bf16);
    const auto fp8 = static_cast<at::ScalarType>(dtype);
    at::manual_seed(11);
    at::Tensor x = at::randn({128, 64}) * magnitude;
    if (bf16) x = x.to(at::kBFloat16);
    const Fp8Tensor q = kernels::quantize_fp8(x, fp8);
    const at::Tensor back = kernels::dequantize_fp8(q, at::kDouble);
    const double rel = fp8 == at::kFloat8_e4m3fn ? std::ldexp(1.0, -4) : std::ldexp(1.0, -3);
    const double abs =
        (fp8 == at::kFloat8_e4m3fn ? std::ldexp(1.0, -10) : std::ldexp(1.0, -17)) / q.scale.item<double>();
    const at::Tensor xd = x.to(at::kDouble);
    const double slack = bf16 ? std::ldexp(1.0, -8) : 1e-6;
    const double worst = ((back - xd).abs() - (rel + slack) * xd.abs()).max().item<double>();
    QVERIFY2(worst <= abs, qPrintable(QString("excess %1 over abs %2").arg(worst).arg(abs)));
    QVERIFY(relative_error(back, xd) < rel);  // and the whole tensor well inside it
  }

  // The fp8 linear against fp32's x @ w^T + b: the output and the three gradients. Tolerances (norm of the error
  // over the norm of the reference): the output 0.06 (x and w each rounded to e4m3, half an ulp 2^-4 at worst,
  // errors of random sign averaging down over K = 256), dx and dw 0.12 (the gradient rounded to e5m2, 2^-3, with
  // one e4m3 operand), db exact to fp32 rounding (a plain fp32 sum of the gradient). On CUDA x is bf16, as autocast
  // hands it over.
  void linearFollowsFp32_data() {
    QTest::addColumn<QString>("device");
    QTest::newRow("cpu") << "cpu";
    QTest::newRow("cuda") << "cuda";
  }
  void linearFollowsFp32() {
    QFETCH(QString, device);
    if (!fp8_device(device)) QSKIP("no CUDA device of compute capability 8.9+ visible: this row runs on a GPU machine");
    const c10::Device dev = parse_device(device.toStdString());
    at::manual_seed(5);
    const int64_t M = 64, K = 256, N = 128;
    const at::Tensor x0 = at::randn({2, M / 2, K}), w0 = at::randn({N, K}) * 0.05, b0 = at::randn({N}) * 0.1,
                     g0 = at::randn({2, M / 2, N}) * 1e-3;  // gradients are small: the scale must find them
    const at::ScalarType x_dtype = dev.is_cuda() ? at::kBFloat16 : at::kFloat;
    // Copies each (to() hands back the same tensor where nothing changes), so the two graphs share no leaf.
    at::Tensor x = x0.to(dev, x_dtype).clone().requires_grad_(), w = w0.to(dev).clone().requires_grad_(),
               b = b0.to(dev).clone().requires_grad_();
    const at::Tensor y = kernels::fp8_linear(x, w, b);
    QCOMPARE(y.scalar_type(), at::kBFloat16);
    QCOMPARE(y.sizes(), (at::IntArrayRef{2, M / 2, N}));
    y.backward(g0.to(dev, at::kBFloat16));
    at::Tensor xr = x0.to(x_dtype).to(at::kFloat).clone().requires_grad_(), wr = w0.clone().requires_grad_(),
               br = b0.clone().requires_grad_();
    const at::Tensor yr = at::linear(xr, wr, br);
    yr.backward(g0.to(at::kBFloat16).to(at::kFloat));
    QCOMPARE(x.grad().scalar_type(), x_dtype);
    QCOMPARE(w.grad().scalar_type(), at::kFloat);
    const double ey = relative_error(y.cpu(), yr), edx = relative_error(x.grad().cpu(), xr.grad()),
                 edw = relative_error(w.grad().cpu(), wr.grad()), edb = relative_error(b.grad().cpu(), br.grad());
    qInfo("%s: relative error y %.4f, dx %.4f, dw %.4f, db %.2g", qPrintable(device), ey, edx, edw, edb);
    QVERIFY2(ey < 0.06, qPrintable(QString::number(ey)));
    QVERIFY2(edx < 0.12, qPrintable(QString::number(edx)));
    QVERIFY2(edw < 0.12, qPrintable(QString::number(edw)));
    QVERIFY2(edb < 1e-5, qPrintable(QString::number(edb)));
  }

  // Shapes _scaled_mm cannot take are refused (the block then keeps bf16); the CPU needs no refusal.
  void shapesAndDevices() {
    QVERIFY(kernels::fp8_linear_fits(at::zeros({4, 16, 32}), at::zeros({64, 32})));
    QVERIFY(!kernels::fp8_linear_fits(at::zeros({3, 5, 32}), at::zeros({64, 32})));  // 15 rows
    QVERIFY(!kernels::fp8_linear_fits(at::zeros({16, 24}), at::zeros({64, 24})));    // K = 24
    QVERIFY(!kernels::fp8_linear_fits(at::zeros({16, 32}), at::zeros({40, 32})));    // N = 40
    QCOMPARE(QString::fromStdString(kernels::fp8_matmul_problem(c10::Device("cpu"))), QString());
  }

  // A tiny run with speed.fp8 on the CPU (bf16 autocast, CPU _scaled_mm) learns as the bf16 run does: 12 steps'
  // losses within 2% of bf16's (fp8's rounding is 4× bf16's per element; the runs share seed and batches), and
  // with activation checkpointing as without.
  void tinyRunFollowsBf16OnTheCpu() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    auto run = [&](bool fp8, bool checkpointing = false) {
      Config c;
      apply_overrides(
          c, test::two_block_run_overrides(
                 env.corpus_excerpt(100000),
                 {"speed.precision=bf16", "train.steps=12", std::string("speed.fp8=") + (fp8 ? "true" : "false"),
                  std::string("speed.activation_checkpointing=") + (checkpointing ? "true" : "false")}));
      test::RecordingSink sink;
      train(c, sink);
      if (sink.end.status != "finished") qWarning("%s", sink.end.error.c_str());
      return sink.losses();
    };
    const std::vector<double> bf16 = run(false), fp8 = run(true);
    QCOMPARE(fp8.size(), bf16.size());
    QVERIFY(!bf16.empty());
    QString lines;
    for (size_t i = 0; i < bf16.size(); ++i) lines += QString(" %1/%2").arg(bf16[i], 0, 'f', 4).arg(fp8[i], 0, 'f', 4);
    qInfo("bf16/fp8:%s", qPrintable(lines));
    QVERIFY2(fp8 != bf16, "the fp8 run's losses are bf16's to the bit: its matmuls did not run in fp8");
    QVERIFY2(bf16.back() < bf16.front(), "the bf16 run must learn on this corpus");
    for (size_t i = 0; i < bf16.size(); ++i)
      QVERIFY2(std::abs(fp8[i] - bf16[i]) <= 0.02 * bf16[i],
               qPrintable(QString("step %1: fp8 %2 vs bf16 %3").arg(i).arg(fp8[i]).arg(bf16[i])));
    // Activation checkpointing recomputes each block's forward in backward: the same amaxes, so the same scales and
    // the same fp8 numbers, and the same losses to fp32's last digits (1e-6 relative).
    const std::vector<double> recomputed = run(true, true);
    QCOMPARE(recomputed.size(), fp8.size());
    for (size_t i = 0; i < fp8.size(); ++i)
      QVERIFY2(
          std::abs(recomputed[i] - fp8[i]) <= 1e-6 * fp8[i],
          qPrintable(
              QString("step %1: checkpointed %2 vs %3").arg(i).arg(recomputed[i], 0, 'g', 9).arg(fp8[i], 0, 'g', 9)));
  }
};

QTEST_GUILESS_MAIN(TestFp8)
#include "test_fp8.moc"
