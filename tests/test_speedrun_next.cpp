// The speedrun's next switches (Polar Express, NorMuon, warm-ups, ...) against PyTorch references written independently
// in tests/reference/ (speedrun_optimizers.py: Polar Express, NorMuon, AdamW's per-group lrs; speedrun_model.py: U-net
// skips and value embeddings), each compared within a stated tolerance; Hugging Face export's refusal. The lines that
// refuse what a switch cannot combine with, beside the combinations that run, are test_config_problems' (a unit suite).
//
// Tolerances: the engine computes in fp32, the references in float64. An orthogonalised matrix has entries of
// O(1/sqrt(min(m, n))); after five quintic steps fp32 rounding leaves them within 1e-4 of the truth. Weights
// after two optimizer steps move by lr-sized amounts: within 2e-5 (NorMuon's second moments within 1e-4 of their
// size). Logits of O(1) after a few fp32 blocks: 1e-4.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QTemporaryDir>
#include <QtTest>

#include "engine/base/config/config.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/model/hf.h"
#include "engine/base/util/error.h"
#include "engine/torch/optim/muon.h"
#include "engine/torch/optim/optimizer.h"
#include "tests/support/reference_json.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using json = nlohmann::json;

namespace {

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

// A tiny model whose weights are all O(1)-scaled random values (so every nonlinearity is exercised and a skip
// at the wrong block changes the logits), skip weights included.
GPT random_model(const std::vector<std::string>& sets, uint64_t seed = 3) {
  Config c;
  c.model = test::tiny_model();
  apply_overrides(c, sets);
  torch::manual_seed(seed);
  GPT m(GPTOptions::from_config(c.model, c.speed));
  at::NoGradGuard no_grad;
  for (auto& p : m->named_parameters()) {
    at::Tensor& t = p.value();
    if (t.dim() == 2) t.copy_(at::randn_like(t) / std::sqrt(static_cast<double>(t.size(1))));
    else if (p.key().find("ln_") != std::string::npos) t.copy_(1 + 0.1 * at::randn_like(t));
    else t.copy_(0.5 * at::randn_like(t) + (p.key() == "skip_weights" ? 1.0 : 0.0));
  }
  m->eval();
  return m;
}

}  // namespace

class TestSpeedrunNext : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  json muon_;  // speedrun_optimizers.py's output

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    muon_ = test::run_reference("speedrun_optimizers.py", "", dir_.filePath("muon.json").toStdString());
  }

  // Both orthogonalisations against their float64 definitions, on wide, tall and square matrices; and Polar
  // Express lands the singular values closer to 1 than Newton–Schulz (what it is for).
  void polarExpressMatchesReference() {
    QCOMPARE(static_cast<int>(muon_["polar_express"].size()), 3);
    for (const json& row : muon_["polar_express"]) {
      const at::Tensor g = test::json_tensor(row["g"]).to(at::kFloat);
      const at::Tensor pe = polar_express(g), ns = newton_schulz5(g);
      QCOMPARE(pe.sizes(), g.sizes());
      QVERIFY2(max_diff(pe, test::json_tensor(row["polar_express"])) < 1e-4,
               qPrintable(QString::number(max_diff(pe, test::json_tensor(row["polar_express"])))));
      QVERIFY(max_diff(ns, test::json_tensor(row["newton_schulz"])) < 1e-4);
      QVERIFY(max_diff(orthogonalise(g, MuonNs::kPolarExpress), pe) == 0);
      const at::Tensor s_pe = at::linalg_svdvals(pe.to(at::kDouble)), s_ns = at::linalg_svdvals(ns.to(at::kDouble));
      const double err_pe = (s_pe - 1).abs().max().item<double>(), err_ns = (s_ns - 1).abs().max().item<double>();
      QVERIFY2(err_pe < err_ns, qPrintable(QString("%1 vs %2").arg(err_pe).arg(err_ns)));
    }
  }

  // Two NorMuon steps on a tall, a wide and a square matrix, after either orthogonalisation: the weights and
  // each row's second moment against the reference.
  void norMuonMatchesReference_data() {
    QTest::addColumn<QString>("ns");
    QTest::newRow("newton_schulz") << "newton_schulz";
    QTest::newRow("polar_express") << "polar_express";
  }
  void norMuonMatchesReference() {
    QFETCH(QString, ns);
    const json& ref = muon_["normuon_" + ns.toStdString()];
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (size_t i = 0; i < ref["matrices"].size(); ++i)
      params.emplace_back("blocks." + std::to_string(i) + ".w",
                          test::json_tensor(ref["matrices"][i]["w0"]).to(at::kFloat).requires_grad_());
    MuonOptions mo{ref["momentum"].get<double>(),
                   ref["lr_scale"].get<double>(),
                   kNewtonSchulzSteps,
                   find_choice(muon_ns_choices(), "optimizer.muon_ns", ns.toStdString()).kind,
                   true,
                   ref["beta2"].get<double>()};
    Muon opt(params, AdamWOptions{}, mo);
    for (int step = 0; step < 2; ++step) {
      for (size_t i = 0; i < params.size(); ++i)
        params[i].second.mutable_grad() = test::json_tensor(ref["matrices"][i]["grads"][step]).to(at::kFloat);
      opt.step(ref["lr"].get<double>());
      for (size_t i = 0; i < params.size(); ++i) {
        const double d = max_diff(params[i].second, test::json_tensor(ref["matrices"][i]["w"][step]));
        QVERIFY2(d < 2e-5, qPrintable(QString("matrix %1, step %2: %3").arg(i).arg(step + 1).arg(d)));
      }
    }
    int moments = 0;
    opt.for_each_extra_state([&](const std::string& key, at::Tensor& v) {
      if (key.rfind("normuon_second_moment.blocks.", 0) != 0) return;
      const size_t i = std::stoul(key.substr(std::string("normuon_second_moment.blocks.").size()));
      const at::Tensor want = test::json_tensor(ref["matrices"][i]["second_moment"][1]);
      QVERIFY(max_diff(v.reshape({-1}), want) < 1e-4 * want.abs().max().item<double>());
      ++moments;
    });
    QCOMPARE(moments, 3);
  }

  // optimizer.head_lr / optimizer.embed_lr: AdamW's groups at their own lr against torch.optim.AdamW with the same
  // groups.
  void groupLearningRatesMatchTorchAdamW_data() {
    QTest::addColumn<bool>("fused");
    QTest::newRow("loop") << false;
    QTest::newRow("fused") << true;
  }
  void groupLearningRatesMatchTorchAdamW() {
    QFETCH(bool, fused);
    const json& ref = muon_["adamw_groups"];
    const double lr = ref["lr"];
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (const auto& [name, t] : ref["start"].items())
      params.emplace_back(name, test::json_tensor(t).to(at::kFloat).requires_grad_());
    AdamWOptions ao{0.9, 0.95, 1e-8, ref["weight_decay"].get<double>(), fused};
    ao.head_lr_scale = ref["head_lr"].get<double>() / lr, ao.embed_lr_scale = ref["embed_lr"].get<double>() / lr;
    AdamW opt(params, ao);
    for (int step = 0; step < 2; ++step) {
      for (auto& [name, p] : params) p.mutable_grad() = test::json_tensor(ref["grads"][step][name]).to(at::kFloat);
      opt.step(lr);
    }
    for (const auto& [name, p] : params) {
      const double d = max_diff(p, test::json_tensor(ref["end"][name]));
      QVERIFY2(d < 1e-6, qPrintable(QString::fromStdString(name) + ": " + QString::number(d)));
    }
    // The groups are found by the parameters' names.
    QCOMPARE(adamw_lr_scale("lm_head", ao), ref["head_lr"].get<double>() / lr);
    QCOMPARE(adamw_lr_scale("blocks.0.attn.c_attn.weight", ao), 1.0);
  }

  // model.unet_skips' and model.value_embeddings' forward against the reference's: 4 blocks (two skips) and 3 (a
  // middle block without one), tied and untied, with and without value embeddings; sampling's KV-cache path
  // gives the same logits; and each switch matters (zeroing its weights changes the logits).
  void modelSwitchesMatchReference_data() {
    QTest::addColumn<int>("layers");
    QTest::addColumn<bool>("tied");
    QTest::addColumn<bool>("unet");
    QTest::addColumn<int>("tables");
    QTest::newRow("unet, 4 blocks, tied") << 4 << true << true << 0;
    QTest::newRow("unet, 3 blocks, untied") << 3 << false << true << 0;
    QTest::newRow("value embeddings 2 of 4 blocks") << 4 << true << false << 2;
    QTest::newRow("value embeddings 1 of 3 blocks, unet") << 3 << false << true << 1;
  }
  void modelSwitchesMatchReference() {
    QFETCH(int, layers);
    QFETCH(bool, tied);
    QFETCH(bool, unet);
    QFETCH(int, tables);
    GPT m = random_model({std::string("model.unet_skips=") + (unet ? "true" : "false"),
                          "model.value_embeddings=" + std::to_string(tables), "model.n_layer=" + std::to_string(layers),
                          std::string("model.tie_weights=") + (tied ? "true" : "false")});
    auto named = m->named_parameters();
    if (unet) QCOMPARE(named["skip_weights"].numel(), static_cast<int64_t>(layers / 2));
    int lambdas = 0;
    for (const auto& p : named) lambdas += p.key().find("value_lambdas") != std::string::npos;
    QCOMPARE(lambdas, std::min(2 * tables, layers));
    QCOMPARE(count_parameters(m->options()), m->num_parameters());
    QCOMPARE(m->num_flop_parameters(),
             m->num_parameters() - (16 + tables * 64 + (tied ? 0 : 64)) * 32);  // lookup tables: no FLOPs
    const at::Tensor idx = at::randint(0, 64, {2, 12});
    json in;
    in["config"] = {
        {"n_layer", layers}, {"n_head", 2}, {"unet_skips", unet}, {"value_embeddings", tables}, {"tie_weights", tied}};
    for (const auto& p : m->named_parameters()) in["params"][p.key()] = test::tensor_json(p.value());
    in["idx"] = test::tensor_json(idx);
    const QString in_path = dir_.filePath("unet_in.json");
    {
      QFile f(in_path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(in.dump()));
    }
    const json out =
        test::run_reference("speedrun_model.py", in_path.toStdString(), dir_.filePath("unet_out.json").toStdString());
    const at::Tensor logits = m->forward(idx).logits, want = test::json_tensor(out["logits"]);
    QVERIFY2(max_diff(logits, want) < 1e-4, qPrintable(QString::number(max_diff(logits, want))));
    std::vector<KVCache> cache;
    at::NoGradGuard no_grad;
    const at::Tensor full = m->forward(idx.narrow(0, 0, 1)).logits;
    at::Tensor part = m->forward_cached(idx.narrow(0, 0, 1).narrow(1, 0, 7), cache);
    QVERIFY(max_diff(part, full.narrow(1, 0, 7)) < 1e-5);
    for (int64_t t = 7; t < 12; ++t)
      QVERIFY(max_diff(m->forward_cached(idx.narrow(0, 0, 1).narrow(1, t, 1), cache), full.narrow(1, t, 1)) < 1e-5);
    // The switches matter: the same weights without the skips, or without the value tables, give other logits.
    for (auto& p : named)
      if (p.key() == "skip_weights" || p.key().rfind("value_embeds.", 0) == 0) p.value().zero_();
    QVERIFY(max_diff(m->forward(idx).logits, want) > 1e-2);
  }

  // Hugging Face GPT-2 has neither skips nor value embeddings: export refuses in one line naming the switches;
  // optimizer and data switches leave the model GPT-2 (it exports).
  void exportRefusesTheModelSwitches() {
    QTemporaryDir out;
    const QString msg = test::error_of([&] {
      export_hf(*random_model({"model.unet_skips=true", "model.value_embeddings=1"}), out.filePath("hf").toStdString());
    });
    QVERIFY2(msg.contains("model.unet_skips=true") && msg.contains("model.value_embeddings=1") && !msg.contains('\n'),
             qPrintable(msg));
    QVERIFY(!QFile::exists(out.filePath("hf/model.safetensors")));
    Config c;
    apply_overrides(c, {"optimizer.name=normuon", "optimizer.muon_ns=polar_express", "optimizer.embed_lr=0.05",
                        "train.seq_warmup=10", "train.batch_warmup=10"});
    QVERIFY(not_gpt2_switches(c.model).empty());
  }
};

QTEST_GUILESS_MAIN(TestSpeedrunNext)
#include "test_speedrun_next.moc"
