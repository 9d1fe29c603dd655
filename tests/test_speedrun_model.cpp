// The speedrun's model switches against references written here, independently of engine/torch/model:
// RMSNorm, ReLU², rotary positions (as complex rotations), QK-norm inside a whole attention layer, logit
// soft-capping; and that a model which is no longer GPT-2 keeps working where GPT-2 does: the KV-cache path
// (rotary needs the cache's offset), parameter and FLOP counts, and Hugging Face export's one-line refusal.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <cmath>
#include <complex>

#include "engine/base/config/config.h"
#include "engine/base/util/error.h"
#include "engine/torch/model/block.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

at::Tensor f64(const at::Tensor& t) { return t.detach().to(at::kDouble); }

double max_diff(const at::Tensor& a, const at::Tensor& b) { return (f64(a) - f64(b)).abs().max().item<double>(); }

// RMSNorm as its paper writes it: x / sqrt(mean(x²) + eps) · g.
at::Tensor ref_rmsnorm(const at::Tensor& x, const at::Tensor& g, double eps) {
  const at::Tensor xd = f64(x);
  at::Tensor out = xd / (xd.pow(2).mean(-1, true) + eps).sqrt();
  return g.defined() ? out * f64(g) : out;
}

// Rotary embedding as a rotation in the complex plane: pair (x_i, x_{i+D/2}) is the number x_i + j·x_{i+D/2},
// multiplied by e^{j·t·θ_i}, θ_i = base^(-2i/D), at position t. Element by element, in double.
at::Tensor ref_rope(const at::Tensor& x, int64_t first) {
  const at::Tensor xd = f64(x).contiguous();
  at::Tensor out = at::empty_like(xd);
  const int64_t B = xd.size(0), H = xd.size(1), T = xd.size(2), D = xd.size(3), half = D / 2;
  auto in = xd.accessor<double, 4>();
  auto o = out.accessor<double, 4>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < half; ++i) {
          const double theta = std::pow(kRopeBase, -2.0 * static_cast<double>(i) / static_cast<double>(D));
          const std::complex<double> z(in[b][h][t][i], in[b][h][t][i + half]);
          const std::complex<double> r = z * std::polar(1.0, static_cast<double>(first + t) * theta);
          o[b][h][t][i] = r.real(), o[b][h][t][i + half] = r.imag();
        }
  return out;
}

// Causal attention from the layer's weights, in double: qkv projection, per-head QK-norm and rotation, softmax
// over the past, output projection.
at::Tensor ref_attention(const at::Tensor& x, const AttentionImpl& a, int64_t H, bool qk_norm, bool rope) {
  const at::Tensor xd = f64(x);
  const int64_t B = xd.size(0), T = xd.size(1), C = xd.size(2), D = C / H;
  at::Tensor qkv = at::linear(xd, f64(a.c_attn->weight), f64(a.c_attn->bias));
  auto heads = [&](int64_t i) { return qkv.narrow(2, i * C, C).reshape({B, T, H, D}).transpose(1, 2); };
  at::Tensor q = heads(0), k = heads(1), v = heads(2);
  if (qk_norm) q = ref_rmsnorm(q, {}, kRmsNormEps), k = ref_rmsnorm(k, {}, kRmsNormEps);
  if (rope) q = ref_rope(q, 0), k = ref_rope(k, 0);
  at::Tensor att = at::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(D));
  att = att.masked_fill(at::ones({T, T}, at::kBool).triu(1), -INFINITY).softmax(-1);
  at::Tensor y = at::matmul(att, v).transpose(1, 2).reshape({B, T, C});
  return at::linear(y, f64(a.c_proj->weight), f64(a.c_proj->bias));
}

Config with(const std::vector<std::string>& sets) {
  Config c;
  c.model = test::tiny_model();
  apply_overrides(c, sets);
  return c;
}

GPT build(const Config& c, uint64_t seed = 7) {
  torch::manual_seed(seed);
  GPT m(GPTOptions::from_config(c.model, c.speed));
  m->eval();
  return m;
}

}  // namespace

class TestSpeedrunModel : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void rmsNormMatchesItsDefinition_data() {
    QTest::addColumn<QString>("layers");
    QTest::newRow("native") << "native";
    QTest::newRow("scratch") << "scratch";
  }
  void rmsNormMatchesItsDefinition() {
    QFETCH(QString, layers);
    const LayersKind kind = find_choice(layers_choices(), "speed.layers", layers.toStdString()).kind;
    LayerNormImpl norm(32, kind, NormKind::kRmsNorm);
    QVERIFY(!norm.bias.defined());  // RMSNorm scales only
    QCOMPARE(static_cast<int>(norm.parameters().size()), 1);
    torch::manual_seed(1);
    {
      at::NoGradGuard no_grad;
      norm.weight.uniform_(0.5, 1.5);
    }
    const at::Tensor x = at::randn({3, 5, 32}) * 3 + 1;
    QVERIFY(max_diff(norm.forward(x), ref_rmsnorm(x, norm.weight, kRmsNormEps)) < 1e-5);
  }

  void relu2IsTheSquareOfRelu() {
    const at::Tensor x = at::linspace(-3, 3, 61);
    const at::Tensor y = mlp_activation(x, MlpAct::kRelu2, LayersKind::kNative);
    auto xa = f64(x).contiguous();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double v = xa[i].item<double>();
      QVERIFY(std::abs(y[i].item<double>() - (v > 0 ? v * v : 0.0)) < 1e-6);
    }
  }

  void ropeRotatesPairsByPosition_data() {
    QTest::addColumn<int>("first");
    QTest::newRow("from 0") << 0;
    QTest::newRow("from 7 (a KV cache's offset)") << 7;
  }
  void ropeRotatesPairsByPosition() {
    QFETCH(int, first);
    torch::manual_seed(2);
    const at::Tensor x = at::randn({2, 3, 9, 16});
    QVERIFY(max_diff(apply_rope(x, first), ref_rope(x, first)) < 1e-5);
  }

  // What rotary is for: the score of a query at m and a key at n depends on m - n only.
  void ropeScoresDependOnRelativePosition() {
    torch::manual_seed(3);
    const at::Tensor q = at::randn({1, 1, 1, 16}), k = at::randn({1, 1, 1, 16});
    auto score = [&](int64_t m, int64_t n) { return (apply_rope(q, m) * apply_rope(k, n)).sum().item<double>(); };
    QVERIFY(std::abs(score(5, 2) - score(13, 10)) < 1e-4);
    QVERIFY(std::abs(score(5, 2) - score(5, 4)) > 1e-3);  // and it does depend on the distance
  }

  void attentionWithQkNormAndRopeMatchesReference_data() {
    QTest::addColumn<bool>("qk_norm");
    QTest::addColumn<bool>("rope");
    QTest::addColumn<QString>("attention");
    QTest::newRow("qk-norm, sdpa") << true << false << "sdpa";
    QTest::newRow("rope, sdpa") << false << true << "sdpa";
    QTest::newRow("both, sdpa") << true << true << "sdpa";
    QTest::newRow("both, naive") << true << true << "naive";
    QTest::newRow("both, buffered mask") << true << true << "buffered-mask";
  }
  void attentionWithQkNormAndRopeMatchesReference() {
    QFETCH(bool, qk_norm);
    QFETCH(bool, rope);
    QFETCH(QString, attention);
    BlockOptions o;
    o.n_embd = 32, o.n_head = 4, o.context = 16, o.qk_norm = qk_norm;
    o.position = rope ? PositionKind::kRope : PositionKind::kLearned;
    o.attention = find_choice(attention_choices(), "speed.attention", attention.toStdString()).kind;
    torch::manual_seed(4);
    AttentionImpl attn(o);
    attn.eval();
    const at::Tensor x = at::randn({2, 11, 32});
    QVERIFY(max_diff(attn.forward(x), ref_attention(x, attn, 4, qk_norm, rope)) < 1e-5);
  }

  // cap · tanh(z / cap) of the logits of the same model without the cap (same seed, same weights).
  void softcapBoundsTheLogits() {
    GPT plain = build(with({}));
    GPT capped = build(with({"model.logit_softcap=2"}));
    const at::Tensor idx = at::randint(0, 64, {2, 10});
    const at::Tensor z = f64(plain->forward(idx).logits);
    const at::Tensor y = capped->forward(idx).logits;
    QVERIFY(max_diff(y, 2.0 * (z / 2.0).tanh()) < 1e-5);
    QVERIFY(y.abs().max().item<double>() < 2.0);
    // The loss is taken on the capped logits.
    const at::Tensor targets = at::randint(0, 64, {2, 10});
    const double loss = capped->forward(idx, targets).loss.item<double>();
    const double want = at::cross_entropy_loss(y.reshape({-1, 64}), targets.reshape({-1})).item<double>();
    QVERIFY(std::abs(loss - want) < 1e-5);
  }

  void zeroInitProjectionsStartAtZero() {
    const GPT m = build(with({"model.zero_init_proj=true", "model.tie_weights=false"}));
    int zeroed = 0;
    for (const auto& p : m->named_parameters()) {
      const bool proj = p.key().find("c_proj.weight") != std::string::npos || p.key() == "lm_head";
      if (proj) {
        QCOMPARE(p.value().abs().max().item<double>(), 0.0);
        ++zeroed;
      } else if (p.key().find("c_fc.weight") != std::string::npos) {
        QVERIFY(p.value().abs().max().item<double>() > 0);
      }
    }
    QCOMPARE(zeroed, 2 * 2 + 1);  // two blocks × (attention, MLP) + the untied head
  }

  // Sampling's path: token by token through the KV cache gives the full forward's logits, positions included.
  void kvCacheMatchesFullForward_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("rope") << "model.position=rope";
    QTest::newRow("every switch") << "model.position=rope model.qk_norm=true model.norm=rmsnorm "
                                     "model.mlp_act=relu2 model.logit_softcap=5";
  }
  void kvCacheMatchesFullForward() {
    QFETCH(QString, sets);
    std::vector<std::string> list;
    for (const QString& s : sets.split(' ')) list.push_back(s.toStdString());
    GPT m = build(with(list));
    const at::Tensor idx = at::randint(0, 64, {1, 12});
    const at::Tensor full = m->forward(idx).logits;
    std::vector<KVCache> cache;
    at::NoGradGuard no_grad;
    at::Tensor first = m->forward_cached(idx.narrow(1, 0, 5), cache);  // a prompt, then one token at a time
    QVERIFY(max_diff(first, full.narrow(1, 0, 5)) < 1e-5);
    for (int64_t t = 5; t < 12; ++t)
      QVERIFY(max_diff(m->forward_cached(idx.narrow(1, t, 1), cache), full.narrow(1, t, 1)) < 1e-5);
  }

  // The studio's count, the model's own and the FLOP count (MFU) agree for every shape of the model.
  void parameterCountsFollowTheSwitches_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("gpt-2") << "";
    QTest::newRow("rmsnorm") << "model.norm=rmsnorm";
    QTest::newRow("rope") << "model.position=rope";
    QTest::newRow("all, untied") << "model.norm=rmsnorm model.position=rope model.qk_norm=true model.mlp_act=relu2 "
                                    "model.tie_weights=false";
  }
  void parameterCountsFollowTheSwitches() {
    QFETCH(QString, sets);
    std::vector<std::string> list;
    for (const QString& s : sets.split(' ', Qt::SkipEmptyParts)) list.push_back(s.toStdString());
    const Config c = with(list);
    const GPT m = build(c);
    QCOMPARE(count_parameters(m->options()), m->num_parameters());
    const bool rope = c.model.position == PositionKind::kRope;
    const int64_t untied_table = c.model.tie_weights ? 0 : m->options().padded_vocab * c.model.n_embd;  // a lookup
    QCOMPARE(m->num_flop_parameters(),
             m->num_parameters() - (rope ? 0 : c.model.context * c.model.n_embd) - untied_table);
  }

  void exportRefusesAModelThatIsNotGpt2() {
    test::ScratchEnv env;
    const GPT m = build(with({"model.norm=rmsnorm", "model.position=rope"}));
    try {
      export_hf(*m, env.path("hf"));
      QFAIL("exported a model that is not GPT-2");
    } catch (const Error& e) {
      const QString msg = QString::fromStdString(e.message());
      QVERIFY2(msg.contains("model.norm=rmsnorm") && msg.contains("model.position=rope") && !msg.contains('\n'),
               qPrintable(msg));
    }
    QVERIFY(!QFile::exists(QString::fromStdString(env.path("hf/model.safetensors"))));
  }

  void problemsNameTheSwitchAndTheFix_data() {
    QTest::addColumn<QString>("sets");
    QTest::addColumn<QString>("expected");
    QTest::newRow("muon + zero-1") << "optimizer.name=muon dist.zero=1"
                                   << "set dist.zero=0";
    QTest::newRow("softcap + fused") << "model.logit_softcap=30 speed.layers=fused"
                                     << "model.logit_softcap needs the logits";
    QTest::newRow("rope, odd head") << "model.position=rope model.n_embd=30 model.n_head=2"
                                    << "is odd";
    QTest::newRow("stop without target") << "eval.stop_at_target=true"
                                         << "eval.target_val_loss > 0";
    QTest::newRow("unknown norm") << "model.norm=batchnorm"
                                  << "model.norm 'batchnorm' is not one of";
  }
  void problemsNameTheSwitchAndTheFix() {
    QFETCH(QString, sets);
    QFETCH(QString, expected);
    Config c;
    QString all;  // an unknown value is refused as it is set, the rest by config_problems
    try {
      for (const QString& s : sets.split(' ')) {
        const QStringList kv = s.split('=');
        set_key(c, kv[0].toStdString(), kv[1].toStdString());
      }
    } catch (const Error& e) {
      all = QString::fromStdString(e.what());
    }
    for (const std::string& p : config_problems(c, 0)) all += QString::fromStdString(p) + "\n";
    QVERIFY2(all.contains(expected), qPrintable(all));
    QVERIFY(config_problems(Config{}, 0).empty());
  }

  void notGpt2SwitchesAreNamed() {
    QVERIFY(not_gpt2_switches(Config{}.model).empty());
    Config c = with({"model.mlp_act=relu2", "model.qk_norm=true", "model.zero_init_proj=true"});
    const auto names = not_gpt2_switches(c.model);
    QCOMPARE(static_cast<int>(names.size()), 2);  // zero-init changes where training starts, not the function
    QCOMPARE(QString::fromStdString(names[0]), QString("model.mlp_act=relu2"));
    QCOMPARE(QString::fromStdString(names[1]), QString("model.qk_norm=true"));
  }
};

QTEST_GUILESS_MAIN(TestSpeedrunModel)
#include "test_speedrun_model.moc"
