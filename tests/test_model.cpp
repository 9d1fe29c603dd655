// The GPT model: GPT-2's parameter counts, and every model-side switch leaves the loss (and gradients) of
// the plain model on the same batch within a stated tolerance.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <cstring>
#include <memory>

#include "engine/base/config/config.h"
#include "engine/torch/generate/sampler.h"
#include "engine/torch/model/autocast.h"
#include "engine/torch/model/gpt.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

GPTOptions tiny_options() {
  ModelConfig m = test::tiny_model(100);
  SpeedConfig o;
  o.attention = AttentionKind::kBufferedMask, o.layers = LayersKind::kScratch;  // the write-ups' starting point
  return GPTOptions::from_config(m, o);
}

// Copies every parameter `from` has into the parameter of the same name in `to` (rows of a padded
// embedding are copied into the first rows).
void copy_parameters(const GPTImpl& from, GPTImpl& to) {
  torch::NoGradGuard no_grad;
  auto dst = to.named_parameters();
  for (const auto& p : from.named_parameters()) {
    auto* d = dst.find(p.key());
    QVERIFY2(d, p.key().c_str());
    d->narrow(0, 0, p.value().size(0)).copy_(p.value());
  }
}

struct Batch2 {
  at::Tensor x, y;
};

Batch2 batch(int64_t B, int64_t T, int64_t vocab, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto tokens = at::randint(vocab, {B, T + 1}, gen, at::kLong);
  return {tokens.narrow(1, 0, T).contiguous(), tokens.narrow(1, 1, T).contiguous()};
}

double loss_of(GPTImpl& model, const Batch2& b) { return model.forward(b.x, b.y).loss.item<double>(); }

// Counts, while it lives, the calls on this thread of the profiler scope named `name` (RECORD_FUNCTION).
class ScopeCounter {
 public:
  explicit ScopeCounter(const char* name) {
    name_ = name, count_ = 0;
    handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(&ScopeCounter::start).needsInputs(false));
  }
  ~ScopeCounter() { at::removeCallback(handle_); }
  int64_t count() const { return count_; }

 private:
  static std::unique_ptr<at::ObserverContext> start(const at::RecordFunction& fn) {
    if (std::strcmp(fn.name(), name_) == 0) ++count_;
    return nullptr;
  }
  static thread_local const char* name_;
  static thread_local int64_t count_;
  at::CallbackHandle handle_;
};
thread_local const char* ScopeCounter::name_ = "";
thread_local int64_t ScopeCounter::count_ = 0;

}  // namespace

class TestModel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void parameterCountsMatchGpt2_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<qlonglong>("expected");
    // The published sizes (tied head, vocabulary 50257, no padding).
    QTest::newRow("gpt2") << "gpt2" << 124439808LL;
    QTest::newRow("gpt2-medium") << "gpt2-medium" << 354823168LL;
    QTest::newRow("gpt2-large") << "gpt2-large" << 774030080LL;
    QTest::newRow("gpt2-xl") << "gpt2-xl" << 1557611200LL;
  }
  void parameterCountsMatchGpt2() {
    QFETCH(QString, preset);
    QFETCH(qlonglong, expected);
    ModelConfig m;
    apply_model_preset(m, preset.toStdString());
    m.vocab_pad_multiple = 1;
    QCOMPARE(count_parameters(GPTOptions::from_config(m, SpeedConfig{})), expected);
  }

  void builtModelHasTheCountedParameters() {
    // The analytic count is what a built model holds, tied or not, padded or not: here for GPT-2 124M.
    ModelConfig m;
    apply_model_preset(m, "gpt2");
    m.vocab_pad_multiple = 1;
    GPT model(GPTOptions::from_config(m, SpeedConfig{}));
    QCOMPARE(model->num_parameters(), 124439808LL);
    m.tie_weights = false, m.vocab_pad_multiple = 64, m.n_layer = 1;
    auto untied = GPTOptions::from_config(m, SpeedConfig{});
    QCOMPARE(GPT(untied)->num_parameters(), count_parameters(untied));
  }

  void switchesKeepTheLoss_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("value");
    QTest::addColumn<double>("tolerance");  // absolute, on a loss of about ln(100) = 4.6
    QTest::newRow("attention=naive") << "speed.attention"
                                     << "naive" << 1e-5;
    QTest::newRow("attention=sdpa") << "speed.attention"
                                    << "sdpa" << 1e-5;
    QTest::newRow("layers=native") << "speed.layers"
                                   << "native" << 1e-5;
    QTest::newRow("vocab padding 64") << "model.vocab_pad_multiple"
                                      << "64" << 1e-6;
    QTest::newRow("untied head") << "model.tie_weights"
                                 << "false" << 1e-6;
    QTest::newRow("activation checkpointing") << "speed.activation_checkpointing"
                                              << "true" << 1e-6;
    QTest::newRow("dropout (eval mode)") << "model.dropout"
                                         << "0.1" << 1e-6;
  }
  void switchesKeepTheLoss() {
    QFETCH(QString, key);
    QFETCH(QString, value);
    QFETCH(double, tolerance);
    torch::manual_seed(1);
    GPT plain(tiny_options());
    Config c;
    c.model = test::tiny_model(100);
    c.speed.attention = AttentionKind::kBufferedMask, c.speed.layers = LayersKind::kScratch;
    set_key(c, key.toStdString(), value.toStdString());
    GPT variant(GPTOptions::from_config(c.model, c.speed));
    copy_parameters(*plain, *variant);
    if (!c.model.tie_weights) {
      torch::NoGradGuard no_grad;
      variant->named_parameters()["lm_head"].copy_(plain->named_parameters()["wte.weight"]);
    }
    if (c.model.dropout > 0) plain->eval(), variant->eval();
    auto b = batch(4, 16, 100, 7);
    auto p = plain->forward(b.x, b.y), v = variant->forward(b.x, b.y);
    QVERIFY2(
        std::abs(p.loss.item<double>() - v.loss.item<double>()) <= tolerance,
        qPrintable(
            QString("loss %1 vs %2").arg(p.loss.item<double>(), 0, 'g', 10).arg(v.loss.item<double>(), 0, 'g', 10)));
    QCOMPARE(v.logits.size(-1), 100);  // padded columns never reach the loss or a sample
    // Gradients too, for the switches that only change how the same function is computed.
    if (c.model.dropout == 0 && c.model.tie_weights) {
      p.loss.backward();
      v.loss.backward();
      auto vp = variant->named_parameters();
      for (const auto& q : plain->named_parameters()) {
        auto g = vp[q.key()].grad().narrow(0, 0, q.value().size(0));
        double diff = (g - q.value().grad()).abs().max().item<double>();
        QVERIFY2(diff < 1e-5, qPrintable(QString::fromStdString(q.key()) + QString(" grad differs by %1").arg(diff)));
      }
    }
  }

  void bf16KeepsTheLossWithinTolerance() {
    // Stated tolerance: bf16 keeps 8 bits of mantissa; on a loss of 4.6 we accept 2% (autocast) and 3% (pure).
    torch::manual_seed(2);
    GPT model(tiny_options());
    auto b = batch(4, 16, 100, 3);
    double fp32 = loss_of(*model, b);
    double autocast;
    {
      AutocastGuard guard(c10::kCPU, true, at::kBFloat16);
      autocast = loss_of(*model, b);
    }
    QVERIFY2(std::abs(autocast - fp32) < 0.02 * fp32, qPrintable(QString("%1 vs %2").arg(autocast).arg(fp32)));
    model->to(at::kBFloat16);
    double pure = loss_of(*model, b);
    QVERIFY2(std::abs(pure - fp32) < 0.03 * fp32, qPrintable(QString("%1 vs %2").arg(pure).arg(fp32)));
  }

  void checkpointingRecomputesDropoutExactly() {
    // With dropout on, checkpointing must replay the same random mask in backward: same grads as without.
    auto o = tiny_options();
    o.block.dropout = 0.2;
    torch::manual_seed(3);
    GPT plain(o);
    o.checkpoint_blocks = true;
    GPT ckpt(o);
    copy_parameters(*plain, *ckpt);
    auto b = batch(2, 16, 100, 4);
    torch::manual_seed(5);
    auto lp = plain->forward(b.x, b.y).loss;
    lp.backward();
    torch::manual_seed(5);
    auto lc = ckpt->forward(b.x, b.y).loss;
    lc.backward();
    QCOMPARE(lp.item<double>(), lc.item<double>());
    auto cp = ckpt->named_parameters();
    for (const auto& q : plain->named_parameters())
      QVERIFY2((cp[q.key()].grad() - q.value().grad()).abs().max().item<double>() < 1e-6, q.key().c_str());
  }

  void fusedGlueIsTheSameFunction_data() {
    QTest::addColumn<bool>("bf16");
    QTest::newRow("fp32") << false;
    QTest::newRow("bf16 autocast") << true;
  }
  void fusedGlueIsTheSameFunction() {
    // speed.fused_glue changes how the block is computed, not what: each block's last residual add happens inside the
    // next block's ln_1 (and the last one's inside ln_f), and the heads' gradients go back into c_attn's output in one
    // pass. On CUDA those are kernels; here the references they are held to (test_kernels). The same function, so
    // the same loss and gradients bit for bit; and one stand-alone residual add a block fewer and one heads'
    // backward a block, so the glue's path is the one taken.
    QFETCH(bool, bf16);
    Config c;
    c.model = test::tiny_model(100);
    c.model.n_layer = 3;
    c.speed.layers = LayersKind::kFused;
    torch::manual_seed(6);
    GPT plain(GPTOptions::from_config(c.model, c.speed));
    c.speed.fused_glue = true;
    GPT deferred(GPTOptions::from_config(c.model, c.speed));
    QVERIFY(!plain->defers_residual());
    QVERIFY(deferred->defers_residual());
    copy_parameters(*plain, *deferred);
    auto b = batch(4, 16, 100, 11);
    auto run = [&](GPTImpl& model, int64_t& adds) {
      AutocastGuard guard(c10::kCPU, bf16, at::kBFloat16);
      ScopeCounter residual("tokamak::residual");
      at::Tensor loss = model.forward(b.x, b.y).loss;
      adds = residual.count();
      return loss;
    };
    int64_t plain_adds = 0, deferred_adds = 0;
    at::Tensor lp = run(*plain, plain_adds), ld = run(*deferred, deferred_adds);
    QCOMPARE(plain_adds, 2 * c.model.n_layer);
    QCOMPARE(deferred_adds, c.model.n_layer);  // ln_2's add stays (on CUDA it is inside ln_2's kernel already)
    QCOMPARE(ld.item<double>(), lp.item<double>());
    auto backward = [](const at::Tensor& loss) {
      ScopeCounter heads("tokamak::qkv_heads_backward");
      loss.backward();
      return heads.count();
    };
    QCOMPARE(backward(lp), int64_t{0});
    QCOMPARE(backward(ld), c.model.n_layer);
    auto dp = deferred->named_parameters();
    for (const auto& q : plain->named_parameters()) {
      QVERIFY2(dp[q.key()].grad().defined(), q.key().c_str());
      QVERIFY2(at::equal(dp[q.key()].grad(), q.value().grad()), q.key().c_str());
    }
    // Without gradients (evaluation) the deferred path gives the same loss.
    {
      torch::NoGradGuard no_grad;
      AutocastGuard guard(c10::kCPU, bf16, at::kBFloat16);
      QCOMPARE(deferred->forward(b.x, b.y).loss.item<double>(), lp.item<double>());
    }
  }

  void paddedLogitsNeverWinASample() {
    auto o = tiny_options();
    o.padded_vocab = 128;
    torch::manual_seed(4);
    GPT model(o);
    {
      // Make the padded rows as attractive as possible: if they leaked into sampling they would win.
      torch::NoGradGuard no_grad;
      model->named_parameters()["wte.weight"].narrow(0, 100, 28).fill_(10.0);
    }
    SampleOptions so;
    so.max_new_tokens = 40, so.top_k = 0, so.temperature = 2.0, so.stop_at_end_of_text = false;
    auto ids = generate(*model, {1, 2, 3}, so, c10::kCPU);
    QCOMPARE(static_cast<int>(ids.size()), 40);
    for (int32_t id : ids) QVERIFY(id >= 0 && id < 100);
  }

  void contextLongerThanTheModelIsAnError() {
    GPT model(tiny_options());
    auto b = batch(1, 17, 100, 1);
    QVERIFY_THROWS_EXCEPTION(std::exception, model->forward(b.x));
  }
};

QTEST_GUILESS_MAIN(TestModel)
#include "test_model.moc"
