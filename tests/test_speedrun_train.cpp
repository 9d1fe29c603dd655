// The speedrun's optimizer and schedule and time to a target loss: Muon's Newton–Schulz iteration
// orthogonalises (singular vectors kept, singular values near 1) and one full Muon + AdamW step equals a
// float64 reference written here; every switch learns on the tiny run; Muon resumes bit-exact; the target is
// recorded (and stops the run). The warm-up/stable/decay schedule is test_schedule's, the scoreboard's time to
// target test_scoreboard_target's (unit suites: no training). The next
// switches (Polar Express, NorMuon, head and embedding lrs, U-net skips, value embeddings, the warm-ups) learn and
// resume bit-exact here too; their references are in test_speedrun_next.cpp.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <cmath>
#include <map>

#include "engine/base/config/config.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/store/run_groups.h"
#include "engine/base/store/scoreboard.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/optim/muon.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/util/error.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

Config tiny_run(const std::string& data, const std::vector<std::string>& more = {}) {
  Config c;
  std::vector<std::string> sets = {"checkpoint.minutes=0"};
  sets.insert(sets.end(), more.begin(), more.end());
  apply_overrides(c, test::two_block_run_overrides(data, sets));
  return c;
}

// The published quintic Newton–Schulz iteration, in double, from its definition.
at::Tensor ref_newton_schulz(const at::Tensor& g) {
  at::Tensor x = g.to(at::kDouble);
  const bool tall = x.size(0) > x.size(1);
  if (tall) x = x.t();
  x = x / (x.norm() + 1e-7);
  for (int i = 0; i < 5; ++i) {
    const at::Tensor a = x.mm(x.t());
    x = 3.4445 * x + (-4.7750 * a + 2.0315 * a.mm(a)).mm(x);
  }
  return tall ? x.t() : x;
}

double max_diff(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

}  // namespace

class TestSpeedrunTrain : public QObject {
  Q_OBJECT
 private Q_SLOTS:
  void newtonSchulzOrthogonalises_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::newRow("wide 32x96") << 32 << 96;
    QTest::newRow("tall 128x32") << 128 << 32;
    QTest::newRow("square 48x48") << 48 << 48;
  }
  void newtonSchulzOrthogonalises() {
    QFETCH(int, rows);
    QFETCH(int, cols);
    torch::manual_seed(11);
    const at::Tensor g = at::randn({rows, cols});
    const at::Tensor o = newton_schulz5(g);
    QCOMPARE(o.sizes(), g.sizes());
    QVERIFY(max_diff(o, ref_newton_schulz(g)) < 1e-4);
    // U^T · O · V is diagonal (O keeps G's singular vectors) with every value near 1: the published quintic
    // is not convergent; it maps singular values into about [0.68, 1.13] (modded-nanogpt's README).
    const auto [u, s, vh] = at::linalg_svd(g.to(at::kDouble), /*full_matrices=*/false);
    const at::Tensor d = u.t().mm(o.to(at::kDouble)).mm(vh.t());
    const at::Tensor diag = d.diagonal();
    QVERIFY2(diag.min().item<double>() > 0.6 && diag.max().item<double>() < 1.2,
             qPrintable(QString("%1 .. %2").arg(diag.min().item<double>()).arg(diag.max().item<double>())));
    QVERIFY((d - at::diag(diag)).abs().max().item<double>() < 1e-4);
  }

  // Two steps (the second uses the momentum of the first) of Muon + AdamW over a tiny model's parameters with
  // fixed gradients, against the update rules written out in double.
  void muonStepEqualsTheReference() {
    Config c;
    c.model = test::tiny_model();
    c.model.tie_weights = false;
    torch::manual_seed(5);
    GPT model(GPTOptions::from_config(c.model, c.speed));
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (const auto& p : model->named_parameters()) params.emplace_back(p.key(), p.value());
    const AdamWOptions ao{0.9, 0.95, 1e-8, 0.1, false};
    const double lr = 0.01, scale = 3.0, beta = 0.95;
    Muon muon(params, ao, MuonOptions{beta, scale, 5});

    struct Ref {
      at::Tensor p, m, v;
    };
    std::map<std::string, Ref> ref;
    for (const auto& [name, p] : params)
      ref[name] = {p.detach().to(at::kDouble).clone(), at::zeros_like(p, at::kDouble), at::zeros_like(p, at::kDouble)};
    int hidden = 0;
    for (int step = 1; step <= 2; ++step) {
      for (auto& [name, p] : params) p.mutable_grad() = at::randn_like(p);
      muon.step(lr);
      for (auto& [name, p] : params) {
        Ref& r = ref[name];
        const at::Tensor g = p.grad().to(at::kDouble);
        if (p.dim() == 2 && name.rfind("blocks.", 0) == 0) {
          hidden += step == 1;
          r.m = beta * r.m + (1 - beta) * g;
          const at::Tensor o = ref_newton_schulz((1 - beta) * g + beta * r.m);
          r.p -= lr * scale * std::sqrt(std::max(1.0, double(p.size(0)) / double(p.size(1)))) * o;
        } else {
          if (p.dim() >= 2) r.p *= 1 - lr * ao.weight_decay;
          r.m = ao.beta1 * r.m + (1 - ao.beta1) * g;
          r.v = ao.beta2 * r.v + (1 - ao.beta2) * g * g;
          const double bc1 = 1 - std::pow(ao.beta1, step), bc2 = 1 - std::pow(ao.beta2, step);
          r.p -= lr / bc1 * r.m / ((r.v / bc2).sqrt() + ao.eps);
        }
        QVERIFY2(max_diff(p, r.p) < 2e-5, qPrintable(QString::fromStdString(name) + " at step " +
                                                     QString::number(step) + ": " + QString::number(max_diff(p, r.p))));
      }
    }
    QCOMPARE(hidden, 2 * 4);  // per block: c_attn, attn.c_proj, c_fc, c_proj
    int momenta = 0;
    muon.for_each_extra_state([&](const std::string& key, at::Tensor& m) {
      ++momenta;
      QVERIFY(max_diff(m, ref[key.substr(std::string("muon_momentum.").size())].m) < 1e-5);
    });
    QCOMPARE(momenta, hidden);
    QCOMPARE(muon.steps_taken(), 2);
  }

  // The warm-ups by their definition (linear in the step, the last warm-up step at the full value; sequence
  // lengths in multiples of 16, at least 16), and the trainer feeding exactly those shapes: each step's tokens.
  void warmupsRampLinearly() {
    Config c;
    c.train.batch_size = 8, c.train.context = 128, c.model.context = 128, c.train.grad_accum = 2;
    c.train.seq_warmup = 10, c.train.batch_warmup = 4;
    const int64_t lens[] = {16, 32, 48, 64, 64, 80, 96, 112, 128, 128, 128};  // ceil(128·(s+1)/10) up to 16s
    const int64_t rows[] = {2, 4, 6, 8, 8};
    for (int64_t s = 0; s <= 10; ++s) {
      QCOMPARE(seq_len_at(c, s), lens[s]);
      QCOMPARE(batch_rows_at(c, s), rows[std::min<int64_t>(s, 4)]);
      QCOMPARE(tokens_at_step(c, s), rows[std::min<int64_t>(s, 4)] * lens[s] * 2);
    }
    c.train.seq_warmup = c.train.batch_warmup = 0;
    QCOMPARE(tokens_at_step(c, 0), tokens_per_step(c));

    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    test::RecordingSink r;
    Config run = tiny_run(env.corpus_excerpt(60000), {"train.steps=5", "train.seq_warmup=4", "train.batch_warmup=2"});
    QCOMPARE(QString::fromStdString(train(run, r).status), QString("finished"));
    // context 32, batch 4: lengths 16, 16, 32, 32, 32 (ceil(32·(s+1)/4) up to 16s) and rows 2, 4, 4, 4, 4.
    const int64_t want[] = {32, 64, 128, 128, 128};
    int64_t total = 0;
    QCOMPARE(static_cast<int>(r.steps.size()), 5);
    for (int i = 0; i < 5; ++i) QCOMPARE(r.steps[i].tokens, total += want[i]);
  }

  // Every switch, alone, on the tiny run: the loss falls well below where it starts (ln 50257 ≈ 10.8).
  void everySwitchLearns_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("rmsnorm") << "model.norm=rmsnorm";
    QTest::newRow("relu2") << "model.mlp_act=relu2";
    QTest::newRow("qk-norm") << "model.qk_norm=true";
    QTest::newRow("rope") << "model.position=rope";
    QTest::newRow("softcap") << "model.logit_softcap=30";
    QTest::newRow("zero-init projections, untied") << "model.zero_init_proj=true model.tie_weights=false";
    QTest::newRow("wsd") << "schedule.name=wsd";
    QTest::newRow("muon") << "optimizer.name=muon";
    QTest::newRow("muon, fused AdamW, accumulation, clipping")
        << "optimizer.name=muon speed.fused_adamw=true train.grad_accum=2 optimizer.grad_clip=0.5";
    QTest::newRow("all of them") << "model.norm=rmsnorm model.mlp_act=relu2 model.qk_norm=true model.position=rope "
                                    "model.logit_softcap=30 model.zero_init_proj=true schedule.name=wsd "
                                    "optimizer.name=muon";
  }
  void everySwitchLearns() {
    QFETCH(QString, sets);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    std::vector<std::string> more = {"train.steps=40", "optimizer.lr=1e-2"};
    for (const QString& s : sets.split(' ')) more.push_back(s.toStdString());
    test::RecordingSink r;
    const EndEvent end = train(tiny_run(env.corpus_excerpt(60000), more), r);
    QCOMPARE(QString::fromStdString(end.status), QString("finished"));
    const double first = r.steps.front().metric("loss"), last = r.steps.back().metric("loss");
    QVERIFY2(first > 10 && last < first - 3, qPrintable(QString("%1 → %2").arg(first).arg(last)));
  }

  // The next switches, alone or with what they need, on the tiny run (two functions: Qt's watchdog bounds each).
  void nextOptimizerSwitchesLearn_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("muon, polar express") << "optimizer.name=muon optimizer.muon_ns=polar_express";
    QTest::newRow("normuon") << "optimizer.name=normuon";
    QTest::newRow("normuon, polar express, loop AdamW")
        << "optimizer.name=normuon optimizer.muon_ns=polar_express speed.fused_adamw=false";
    QTest::newRow("untied head and embeddings at their own lr")
        << "model.tie_weights=false optimizer.head_lr=0.015 optimizer.embed_lr=0.03";
    QTest::newRow("sequence length warm-up") << "train.seq_warmup=20";
    QTest::newRow("batch size warm-up") << "train.batch_warmup=20";
  }
  void nextOptimizerSwitchesLearn() { everySwitchLearns(); }
  void nextModelSwitchesLearn_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("unet skips, 4 blocks") << "model.unet_skips=true model.n_layer=4";
    QTest::newRow("unet skips, activation checkpointing")
        << "model.unet_skips=true speed.activation_checkpointing=true";
    QTest::newRow("value embeddings, 1 table") << "model.value_embeddings=1";
    QTest::newRow("value embeddings at their own lr, muon")
        << "model.value_embeddings=1 optimizer.embed_lr=0.03 optimizer.name=muon";
  }
  void nextModelSwitchesLearn() { everySwitchLearns(); }

  // Muon's momentum (NorMuon's second moment, AdamW's groups, the skip weights) is in the checkpoint: 4 + 4 steps
  // give the losses of 8, bit for bit on the CPU.
  void muonResumesBitExact_data() {
    QTest::addColumn<QString>("sets");
    QTest::newRow("muon, wsd") << "optimizer.name=muon schedule.name=wsd";
    QTest::newRow("normuon, polar express") << "optimizer.name=normuon optimizer.muon_ns=polar_express";
    QTest::newRow("head and embed lr, untied")
        << "optimizer.name=muon model.tie_weights=false optimizer.head_lr=0.002 optimizer.embed_lr=0.03";
    QTest::newRow("unet skips") << "optimizer.name=muon model.unet_skips=true";
    QTest::newRow("value embeddings") << "optimizer.name=muon model.value_embeddings=1";
    QTest::newRow("warm-ups, resumed inside them") << "train.seq_warmup=6 train.batch_warmup=6";
  }
  void muonResumesBitExact() {
    QFETCH(QString, sets);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    std::vector<std::string> more = {"train.steps=8", "checkpoint.every=4", "checkpoint.dir=" + env.path("ckpt")};
    for (const QString& s : sets.split(' ')) more.push_back(s.toStdString());
    Config c = tiny_run(env.corpus_excerpt(60000), more);
    test::RecordingSink whole;
    QCOMPARE(QString::fromStdString(train(c, whole).status), QString("finished"));
    QCOMPARE(whole.checkpoints.front().step, 4);
    Config resumed = c;
    resumed.checkpoint.resume = whole.checkpoints.front().path;
    test::RecordingSink rest;
    QCOMPARE(QString::fromStdString(train(resumed, rest).status), QString("finished"));
    QCOMPARE(static_cast<int>(rest.steps.size()), 4);
    for (int i = 0; i < 4; ++i) QCOMPARE(rest.steps[i].metric("loss"), whole.steps[4 + i].metric("loss"));
    // Resuming a Muon run with AdamW instead is refused before step 1, naming the state it lacks.
    if (c.optimizer.name == OptimizerKind::kAdamW) return;
    Config adamw = resumed;
    adamw.optimizer.name = OptimizerKind::kAdamW, adamw.optimizer.muon_ns = MuonNs::kNewtonSchulz;
    test::RecordingSink failed;
    try {
      train(adamw, failed);
      QFAIL("a Muon checkpoint resumed with AdamW");
    } catch (const Error& e) {
      QVERIFY2(QString::fromStdString(e.message()).contains("has no optimizer.exp_avg.blocks.0"), e.what());
    }
  }

  // A target the tiny run reaches at its first evaluation: recorded once, with the steps, tokens and training
  // time, and the run stops there (finished, with a checkpoint).
  void targetIsRecordedAndStops() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000),
                        {"train.steps=40", "eval.every=5", "optimizer.lr=1e-2", "eval.target_val_loss=10.5",
                         "eval.stop_at_target=true", "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink r;
    const EndEvent end = train(c, r);
    QCOMPARE(QString::fromStdString(end.status), QString("finished"));
    QVERIFY(!r.evals.empty());
    const EvalEvent& hit = r.evals.back();
    QVERIFY(hit.metrics.has("time_to_target_s"));
    QVERIFY(hit.metric("val_loss") <= 10.5);
    QCOMPARE(hit.metric("steps_to_target"), double(hit.step));
    QCOMPARE(hit.metric("tokens_to_target"), double(hit.tokens));
    QVERIFY(hit.metric("time_to_target_s") > 0 && hit.metric("time_to_target_s") <= end.wall_s);
    QCOMPARE(end.step, hit.step);  // stopped at the evaluation that reached it
    QVERIFY(end.step < 40);
    for (size_t i = 0; i + 1 < r.evals.size(); ++i) QVERIFY(!r.evals[i].metrics.has("time_to_target_s"));
    QCOMPARE(r.checkpoints.back().step, end.step);
    QCOMPARE(read_checkpoint_info(r.checkpoints.back().path).target_step, end.step);
  }

  void unreachedTargetRecordsNothing() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000), {"train.steps=10", "eval.every=5", "eval.target_val_loss=0.01",
                                                    "eval.stop_at_target=true", "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink r;
    const EndEvent end = train(c, r);
    QCOMPARE(end.step, 10);
    QCOMPARE(static_cast<int>(r.evals.size()), 2);
    for (const EvalEvent& e : r.evals) QVERIFY(!e.metrics.has("time_to_target_s"));
  }
};

QTEST_GUILESS_MAIN(TestSpeedrunTrain)
#include "test_speedrun_train.moc"
