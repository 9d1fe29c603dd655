// Generation: the KV cache gives the logits and the greedy tokens of the full-window forward (also once the
// text outgrows the context), and "load a checkpoint and sample" gives what sampling the trained model gives.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <set>

#include "engine/checkpoint/checkpoint.h"
#include "engine/core/config/config.h"
#include "engine/generate/generate.h"
#include "engine/model/gpt.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

GPTOptions tiny(const std::string& attention, int64_t vocab = 64) {
  ModelConfig m = test::tiny_model(vocab);
  SpeedConfig o;
  o.attention = attention;
  return GPTOptions::from_config(m, o);
}

}  // namespace

class TestGenerate : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void cachedLogitsEqualTheFullForward_data() {
    QTest::addColumn<QString>("attention");
    QTest::newRow("sdpa") << "sdpa";
    QTest::newRow("buffered-mask") << "buffered-mask";
    QTest::newRow("naive") << "naive";
  }
  void cachedLogitsEqualTheFullForward() {
    QFETCH(QString, attention);
    torch::manual_seed(7);
    GPT m(tiny(attention.toStdString()));
    m->eval();
    torch::NoGradGuard no_grad;
    auto idx = at::randint(64, {2, 12}, at::kLong);
    auto full = m->forward(idx).logits;
    // A prefix of 5, a chunk of 4 (new tokens that also see each other), then single tokens.
    std::vector<KVCache> cache;
    std::vector<at::Tensor> parts{m->forward_cached(idx.narrow(1, 0, 5), cache),
                                  m->forward_cached(idx.narrow(1, 5, 4), cache)};
    for (int64_t t = 9; t < 12; ++t) parts.push_back(m->forward_cached(idx.narrow(1, t, 1), cache));
    QCOMPARE(cache.front().length(), int64_t{12});
    auto cached = at::cat(parts, 1);
    const double diff = (cached - full).abs().max().item<double>();
    QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff)));
    QVERIFY(!at::equal(full.narrow(1, 0, 1), full.narrow(1, 1, 1)));  // the logits differ by position
    std::vector<KVCache> over(cache);
    QVERIFY(test::error_of([&] { m->forward_cached(idx.narrow(1, 0, 5), over); }).contains("exceeds model.context"));
  }

  void greedyTokensAreTheSameWithAndWithoutTheCache() {
    torch::manual_seed(8);
    GPT m(tiny("sdpa"));
    {
      torch::NoGradGuard no_grad;  // GPT-2's small init makes a constant greedy sequence: spread the weights
      for (auto& p : m->parameters()) p.normal_(0, 0.5);
    }
    SampleOptions o;
    o.top_k = 1, o.max_new_tokens = 40, o.stop_at_end_of_text = false;  // 5 + 40 tokens: past the context of 16
    std::vector<int32_t> prompt{3, 14, 15, 9, 2};
    o.kv_cache = true;
    auto with = generate(*m, prompt, o, c10::kCPU);
    o.kv_cache = false;
    auto without = generate(*m, prompt, o, c10::kCPU);
    QCOMPARE(with.size(), size_t{40});
    QCOMPARE(with, without);
    QVERIFY(std::set<int32_t>(with.begin(), with.end()).size() > 1);  // not a degenerate constant
  }

  // `more` goes on past max_new_tokens while it asks (sample_text: to finish a character the last token left
  // open), continuing the same draw: the first tokens are those sampled without it.
  void moreSamplesPastTheLastTokenWhileAsked() {
    torch::manual_seed(10);
    GPT m(tiny("sdpa"));
    SampleOptions o;
    o.max_new_tokens = 4, o.seed = 5, o.stop_at_end_of_text = false;
    const auto plain = generate(*m, {3, 14, 15}, o, c10::kCPU);
    std::vector<size_t> asked;
    o.more = [&](const std::vector<int32_t>& out) {
      asked.push_back(out.size());
      return out.size() < 7;
    };
    const auto longer = generate(*m, {3, 14, 15}, o, c10::kCPU);
    QCOMPARE(plain.size(), size_t{4});
    QCOMPARE(longer.size(), size_t{7});
    QVERIFY(std::equal(plain.begin(), plain.end(), longer.begin()));
    QCOMPARE(asked, (std::vector<size_t>{4, 5, 6, 7}));
  }

  void checkpointSamplingIsTheModelsSampling() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c;
    apply_overrides(c, test::tiny_run_overrides());
    torch::manual_seed(9);
    GPT m(GPTOptions::from_config(c.model, c.speed));
    const std::string file = checkpoint_path(env.path("gen"), 1);
    save_checkpoint(file, *m, nullptr, {"uid", config_to_json(c, -1), 1, 0, ""}, c10::kCPU);
    SampleOptions o;
    o.max_new_tokens = 12, o.seed = 4;
    Generation g = generate_from_checkpoint(file, "Hacker", o, "cpu");
    QCOMPARE(g.step, int64_t{1});
    QVERIFY(g.text.rfind("Hacker", 0) == 0 && g.text.size() > 6);
    QCOMPARE(QString::fromStdString(g.text), QString::fromStdString(sample_text(*m, "Hacker", o, c10::kCPU)));
    QVERIFY(test::error_of([&] { generate_from_checkpoint(file, "x", o, "cuda:abc"); }).contains("cuda:abc"));
  }
};

QTEST_GUILESS_MAIN(TestGenerate)
#include "test_generate.moc"
