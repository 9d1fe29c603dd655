// The kinds of a step's work (engine/base/perf/op_kinds.h), by the chains of names LibTorch's profiler gives a
// kernel or an operator: the innermost name that says what the work is decides, generic names defer to the ones
// around them, and a kernel nothing launched is "unattributed".
#include <QtTest>

#include "engine/base/perf/op_kinds.h"

using namespace tokamak;

class TestOpKinds : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void chainsHaveTheirKind_data() {
    QTest::addColumn<QStringList>("chain");
    QTest::addColumn<QString>("kind");
    // CUDA kernels: the kernel's name, then its op and what encloses it.
    QTest::newRow("cuBLAS in the head") << QStringList{"nvjet_tst_128x256", "aten::mm", "tokamak::head"} << "matmul";
    QTest::newRow("our loss kernel") << QStringList{"softmax_ce_grad_packed_kernel", "tokamak::classifier"} << "head";
    QTest::newRow("cuDNN attention") << QStringList{"cudnn_generated_fort_native_sdpa_sm90_flash_fprop",
                                                    "aten::_scaled_dot_product_cudnn_attention"}
                                     << "attention";
    QTest::newRow("autocast cast in a linear")
        << QStringList{"vectorized_elementwise_kernel", "aten::copy_", "aten::_to_copy", "aten::to", "aten::linear"}
        << "casts/copies";
    QTest::newRow("LayerNorm backward") << QStringList{"layer_norm_grad_input_kernel",
                                                       "aten::native_layer_norm_backward", "NativeLayerNormBackward0"}
                                        << "norm";
    QTest::newRow("our fused residual + LayerNorm")
        << QStringList{"residual_layernorm_forward", "tokamak::residual_layernorm"} << "norm";
    QTest::newRow("a copy in our LayerNorm's backward")
        << QStringList{"Memcpy DtoD (Device -> Device)", "aten::clone", "tokamak::layernorm_backward"}
        << "casts/copies";
    QTest::newRow("GELU backward with the bias") << QStringList{"gelu_backward_bias"} << "activation";
    QTest::newRow("residual add") << QStringList{"elementwise_kernel", "aten::add", "tokamak::residual"} << "residual";
    QTest::newRow("bias gradient sum") << QStringList{"reduce_kernel", "aten::sum", "AddmmBackward0"} << "other";
    QTest::newRow("the head's in-place scale (the same kernel as AdamW's)")
        << QStringList{"multi_tensor_apply_kernel", "aten::_foreach_mul_", "tokamak::head_scale"} << "head";
    QTest::newRow("fused AdamW") << QStringList{"multi_tensor_apply_kernel", "aten::_fused_adamw_"} << "optimizer";
    QTest::newRow("clip inside the optimizer scope")
        << QStringList{"reduce_kernel", "aten::linalg_vector_norm", "tokamak::optimizer"} << "optimizer";
    QTest::newRow("memset") << QStringList{"Memset (Device)", "aten::zero_"} << "casts/copies";
    QTest::newRow("a split's cat") << QStringList{"CatArrayBatchedCopy", "aten::cat", "SplitBackward0"}
                                   << "casts/copies";
    QTest::newRow("our heads' backward (no cat)")
        << QStringList{"heads_to_qkv_kernel", "tokamak::qkv_heads_backward", "QkvHeadsFunctionBackward"}
        << "casts/copies";
    QTest::newRow("speed.fp8's amax") << QStringList{"reduce_kernel", "aten::linalg_vector_norm", "tokamak::fp8_cast"}
                                      << "casts/copies";
    QTest::newRow("speed.fp8's cast") << QStringList{"scale_cast_fp8_kernel", "tokamak::fp8_cast"} << "casts/copies";
    QTest::newRow("speed.fp8's GEMM") << QStringList{"sm90_xmma_gemm_e4m3bf16", "aten::_scaled_mm"} << "matmul";
    QTest::newRow("nothing says") << QStringList{"elementwise_kernel", "aten::mul", "MulBackward0"} << "other";
    QTest::newRow("no launcher") << QStringList{} << "unattributed";
    // CPU operators: the op, then what encloses it.
    QTest::newRow("CPU mm") << QStringList{"aten::mm", "aten::matmul", "aten::linear"} << "matmul";
    QTest::newRow("CPU row kernel") << QStringList{"tokamak::classifier_rows"} << "head";
    QTest::newRow("CPU GELU") << QStringList{"aten::gelu", "aten::gelu"} << "activation";
    QTest::newRow("CPU flash attention") << QStringList{"aten::_scaled_dot_product_flash_attention_for_cpu",
                                                        "aten::scaled_dot_product_attention"}
                                         << "attention";
  }
  void chainsHaveTheirKind() {
    QFETCH(QStringList, chain);
    QFETCH(QString, kind);
    std::vector<std::string> names;
    for (const QString& n : chain) names.push_back(n.toStdString());
    QCOMPARE(QString::fromStdString(op_kind(names)), kind);
  }

  // Every kind op_kind returns is one the tables list, and the list holds each once.
  void kindsAreListedOnce() {
    const std::vector<std::string>& kinds = op_kinds();
    QSet<QString> seen;
    for (const std::string& k : kinds) {
      QVERIFY2(!seen.contains(QString::fromStdString(k)), k.c_str());
      seen.insert(QString::fromStdString(k));
    }
    for (const auto& chain : std::vector<std::vector<std::string>>{{"aten::mm"}, {"aten::add"}, {}, {"adam"}})
      QVERIFY(seen.contains(QString::fromStdString(op_kind(chain))));
  }
};

QTEST_GUILESS_MAIN(TestOpKinds)
#include "test_op_kinds.moc"
