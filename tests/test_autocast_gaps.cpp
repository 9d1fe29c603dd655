// Where CUDA autocast does not reach the fused layers' operators. Autocast casts an operator's inputs to bf16 only
// when the operator is on its device's list, and the CPU's and CUDA's lists differ: cuBLASLt's bias + GELU epilogue
// (at::_addmm_activation) is on the CPU's list alone. A CPU run therefore never shows a mixed-dtype call that a GPU
// run throws on. These checks hold on a CPU: they read CUDA autocast's registrations from the dispatcher (LibTorch
// registers them whether or not a GPU is present) and run the no-gradient path with the dtypes a CUDA run hands
// it — a bf16 activation from the glue's LayerNorm, or an fp32 one under activation checkpointing, beside fp32
// weights — with no autocast to help, as on CUDA.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <QtTest>

#include "engine/torch/kernels/bias_gelu.h"
#include "engine/torch/kernels/reference.h"

using namespace tokamak;

namespace {

bool autocast_covers(const char* op, c10::DispatchKey key) {
  const auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
  if (!handle) throw std::runtime_error(std::string("no operator ") + op + " in this LibTorch");
  return handle->hasKernelForDispatchKey(key);
}

}  // namespace

class TestAutocastGaps : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The gap itself: if a LibTorch release adds the op to CUDA's list, the cast in bias_gelu_no_grad is no longer
  // needed (but harmless), and this check says so.
  void addmmActivationIsOnTheCpuListOnly() {
    QVERIFY(autocast_covers("aten::_addmm_activation", c10::DispatchKey::AutocastCPU));
    QVERIFY2(!autocast_covers("aten::_addmm_activation", c10::DispatchKey::AutocastCUDA),
             "CUDA autocast now covers _addmm_activation: bias_gelu_no_grad's own cast may go");
    // The check can tell covered from not: addmm is on both lists.
    QVERIFY(autocast_covers("aten::addmm", c10::DispatchKey::AutocastCUDA));
  }

  // Every operator the fused layers hand mixed dtypes, trusting autocast to cast them, is on CUDA's list.
  void reliedOnOperatorsAreOnCudasList() {
    int checked = 0;
    for (const char* op : kernels::kAutocastReliantOps) {
      QVERIFY2(autocast_covers(op, c10::DispatchKey::AutocastCUDA),
               qPrintable(QString("%1 is not on CUDA autocast's list: cast its inputs in our code").arg(op)));
      ++checked;
    }
    QVERIFY(checked > 0);
  }

  // The no-gradient path with the dtypes a CUDA bf16 run gives it, and nothing else to cast them: the epilogue op
  // alone throws on the mix (the defect a GPU run hit at every evaluation), bias_gelu_no_grad does not, and it
  // computes the MLP's first half in bf16, as the training path does under autocast.
  void noGradPathTakesCudasDtypes_data() {
    QTest::addColumn<int>("activation");
    QTest::newRow("bf16 activation (the glue's ln_2)") << int(at::kBFloat16);
    QTest::newRow("fp32 activation (checkpointing's forward)") << int(at::kFloat);
  }
  void noGradPathTakesCudasDtypes() {
    QFETCH(int, activation);
    at::manual_seed(3);
    const at::Tensor x = at::randn({24, 32}).to(static_cast<at::ScalarType>(activation));
    const at::Tensor w = at::randn({64, 32}) * 0.2, b = at::randn({64}) * 0.1;  // fp32 master weights
    at::NoGradGuard no_grad;
    if (x.scalar_type() != w.scalar_type()) {
      bool threw = false;
      try {
        at::_addmm_activation(b, x, w.t(), 1, 1, /*use_gelu=*/true);
      } catch (const c10::Error&) {
        threw = true;
      }
      QVERIFY2(threw, "_addmm_activation took mixed dtypes: this check no longer shows the defect it guards");
    }
    const at::Tensor y = kernels::bias_gelu_no_grad(x, w, b, at::kBFloat16);
    QCOMPARE(y.scalar_type(), at::kBFloat16);  // fp32 in, bf16 GEMM: autocast's dtype, not plain fp32
    const at::Tensor ref = kernels::bias_gelu_reference(x.to(at::kBFloat16).to(at::kFloat),
                                                        w.to(at::kBFloat16).to(at::kFloat),
                                                        b.to(at::kBFloat16).to(at::kFloat));
    // Stated tolerance: bf16 output rounding (2^-8 relative) plus bf16 accumulation-order differences.
    const double err = ((y.to(at::kFloat) - ref).abs() - 1e-2 * ref.abs()).max().item<double>();
    QVERIFY2(err <= 2e-2, qPrintable(QString::number(err)));
    // Without autocast the inputs keep the activation's dtype (an fp32 run stays fp32).
    if (x.scalar_type() == at::kFloat)
      QCOMPARE(kernels::bias_gelu_no_grad(x, w, b, std::nullopt).scalar_type(), at::kFloat);
  }
};

QTEST_GUILESS_MAIN(TestAutocastGaps)
#include "test_autocast_gaps.moc"
