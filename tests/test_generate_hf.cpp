// GPT-2 weights in and out: export to the Hugging Face layout and back gives identical tensors; transformers
// loads the export and computes the same logits (fp32, 1e-4) and greedy tokens; mismatches are named.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/torch/generate/generate.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/data/tokenizer.h"
#include "engine/torch/model/hf.h"
#include "engine/torch/model/hf_tokenizer.h"
#include "engine/base/util/files.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/util/safetensors.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using test::error_of;

namespace {

GPTOptions tiny(bool tie = true, bool bias = true, int64_t n_embd = 32) {
  ModelConfig m = test::tiny_model(60);
  m.n_embd = n_embd, m.vocab_pad_multiple = 64;  // padded here: the export must cut the padding off
  m.tie_weights = tie, m.qkv_bias = bias;
  return GPTOptions::from_config(m, SpeedConfig{});
}

// Random biases and LayerNorms too (init leaves them 0 and 1), so a mapping mistake cannot hide.
void randomize(GPTImpl& m) {
  at::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.normal_(0, 0.2);
  const auto& o = m.options();
  for (auto& p : m.named_parameters())
    if (p.key() == "wte.weight" || p.key() == "lm_head")
      p.value().narrow(0, o.vocab_size, o.padded_vocab - o.vocab_size).zero_();
}

// Runs the transformers reference (see tests/reference/hf_gpt2_reference.py); empty when it is not installed.
nlohmann::json transformers_reference(const std::string& dir, const std::string& extra = "") {
  std::string json;
  const int code = test::run(test::python() + " " TOKAMAK_SOURCE_DIR "/tests/reference/hf_gpt2_reference.py " + dir +
                                 " 5,17,3,42,8,59 8 " + extra + " 2>/dev/null",
                             &json);
  if (code == 3) return {};
  if (code != 0) throw std::runtime_error("the reference script failed: " + json);
  return nlohmann::json::parse(json);
}

const std::vector<int32_t> kIds{5, 17, 3, 42, 8, 59};

// Largest difference between the model's logits for kIds and the reference's.
double logit_difference(GPTImpl& m, const nlohmann::json& ref) {
  torch::NoGradGuard no_grad;
  m.eval();
  auto logits = m.forward(at::tensor(std::vector<int64_t>(kIds.begin(), kIds.end())).view({1, -1})).logits[0];
  double diff = 0;
  for (int64_t t = 0; t < logits.size(0); ++t)
    for (int64_t v = 0; v < logits.size(1); ++v)
      diff = std::max(diff, std::abs(logits[t][v].item<double>() - ref["logits"][t][v].get<double>()));
  return diff;
}

std::vector<int32_t> greedy(GPTImpl& m) {
  SampleOptions o;
  o.top_k = 1, o.max_new_tokens = 8, o.stop_at_end_of_text = false;
  return generate(m, kIds, o, c10::kCPU);
}

}  // namespace

class TestGenerateHf : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path(const std::string& n) const { return dir_.path().toStdString() + "/" + n; }

 private Q_SLOTS:
  void roundTripGivesIdenticalTensors_data() {
    QTest::addColumn<bool>("tie");
    QTest::addColumn<bool>("bias");
    QTest::newRow("GPT-2 (tied, biases)") << true << true;
    QTest::newRow("untied head") << false << true;
    QTest::newRow("no biases") << true << false;
  }
  void roundTripGivesIdenticalTensors() {
    QFETCH(bool, tie);
    QFETCH(bool, bias);
    torch::manual_seed(1);
    GPT a(tiny(tie, bias));
    randomize(*a);
    const std::string out = path(std::string("rt-") + (tie ? "t" : "u") + (bias ? "b" : "n"));
    export_hf(*a, out);
    QVERIFY(is_hf_weights(out));
    const SafetensorsHeader h = read_safetensors_header(out + "/model.safetensors");
    // GPT-2's names and layouts: Conv1D transposed, vocabulary cut to vocab_size.
    QVERIFY(h.find("transformer.h.1.mlp.c_fc.weight"));
    QCOMPARE(h.find("transformer.h.1.mlp.c_fc.weight")->shape, (std::vector<int64_t>{32, 128}));
    QCOMPARE(h.find("transformer.wte.weight")->shape, (std::vector<int64_t>{60, 32}));
    QCOMPARE(h.find("transformer.h.0.attn.c_attn.bias") != nullptr, true);
    QCOMPARE(h.find("lm_head.weight") != nullptr, !tie);
    torch::manual_seed(2);
    GPT b(tiny(tie, bias));
    load_hf_weights(*b, out);
    for (const auto& p : a->named_parameters())
      QVERIFY2(at::equal(p.value(), b->named_parameters()[p.key()]), p.key().c_str());
  }

  void mismatchesAreNamed() {
    torch::manual_seed(3);
    GPT a(tiny());
    randomize(*a);
    const std::string out = path("mismatch");
    export_hf(*a, out);
    GPT wider(tiny(true, true, 64));
    QString e = error_of([&] { load_hf_weights(*wider, out); });
    QVERIFY2(e.contains("transformer.wte.weight in '") && e.contains("has shape [60, 32] but the model needs [60, 64]"),
             qPrintable(e));
    GPT untied(tiny(false, true));
    e = error_of([&] { load_hf_weights(*untied, out); });
    QVERIFY2(e.contains("has no lm_head.weight (Tokamak's lm_head)"), qPrintable(e));
    GPT unbiased(tiny(true, false));
    e = error_of([&] { load_hf_weights(*unbiased, out); });  // the export's biases are not zero
    QVERIFY2(e.contains("holds transformer.h.") && e.contains(".bias, which the model does not have"), qPrintable(e));
    QVERIFY(!e.contains('\n'));
  }

  void transformersAgreesOnLogitsAndGreedyTokens() {
    torch::manual_seed(4);
    GPT m(tiny());
    randomize(*m);
    const std::string out = path("for-transformers");
    export_hf(*m, out);
    const nlohmann::json ref = transformers_reference(out);
    QVERIFY2(!ref.is_null(), "transformers is not installed in the set-up's venv (scripts/setup.sh installs it)");
    const double diff = logit_difference(*m, ref);
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    QCOMPARE(greedy(*m), ref["greedy"].get<std::vector<int32_t>>());
  }

  void weightsTransformersWroteLoadAndAgree() {
    const std::string dir = path("from-transformers");
    const nlohmann::json ref = transformers_reference(dir, "--make");
    QVERIFY2(!ref.is_null(), "transformers is not installed in the set-up's venv (scripts/setup.sh installs it)");
    ModelConfig mc = hf_model_config(dir, ModelConfig{});
    QCOMPARE(mc.n_layer, int64_t{2});
    QCOMPARE(mc.vocab_size, int64_t{60});
    GPT m(GPTOptions::from_config(mc, SpeedConfig{}));
    load_hf_weights(*m, dir);
    const double diff = logit_difference(*m, ref);
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    QCOMPARE(greedy(*m), ref["greedy"].get<std::vector<int32_t>>());
  }

  void tokenizerFilesLoadBackAsTheSameTokenizer() {
    QVERIFY2(!test::asset("gpt2.tiktoken").empty() && !test::asset("jargon.txt").empty(),
             "assets missing: run scripts/setup.sh");
    const std::string out = path("tokenizer");
    export_hf_tokenizer(Tokenizer::gpt2(), out, 1024);
    // Tokamak's own reader of GPT-2's encoder.json + vocab.bpe checks that merge i makes token 256 + i.
    Tokenizer back = Tokenizer::from_encoder_json(out + "/vocab.json", out + "/merges.txt");
    const std::string text =
        read_file(test::asset("jargon.txt")).substr(0, 200000) + " <|endoftext|> héllo 東京 🙂";
    const auto ids = Tokenizer::gpt2().encode(text);
    QVERIFY(ids.size() > 10000);
    QVERIFY(back.encode(text) == ids);
    QCOMPARE(back.vocab_size(), Tokenizer::gpt2().vocab_size());
  }

  // model.init_from: a run starts from the weights. After one AdamW step every weight is within the step's
  // bound (Adam moves each by at most lr, plus a decay of lr·wd·|w|) of the file's, while a random start is
  // far from them everywhere.
  void trainingStartsFromTheWeights() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const std::string hf = path("init-from"), ckpts = path("init-from-ckpts");
    test::export_tiny_hf(hf, 50257, 21);
    Config c;
    apply_overrides(c, {"data.path=" + env.corpus_excerpt(40000), "train.steps=1", "train.batch_size=2", "eval.every=0",
                        "sample.every=-1", "threads=1", "speed.precision=fp32", "checkpoint.dir=" + ckpts});
    c.model = hf_weights_config(hf, c.model);  // what the studio's "Start from weights…" does
    c.model.init_from = hf;
    const std::vector<std::string> problems = config_problems(c, 0);
    QVERIFY2(problems.empty(), problems.empty() ? "" : problems.front().c_str());
    EventSink quiet;
    QCOMPARE(QString::fromStdString(train(c, quiet).status), QString("finished"));

    GPT file(GPTOptions::from_config(c.model, c.speed)), trained(GPTOptions::from_config(c.model, c.speed));
    load_hf_weights(*file, hf);
    load_checkpoint(list_checkpoints(ckpts).back(), *trained, nullptr, false, c10::kCPU);
    torch::manual_seed(99);
    GPT fresh(GPTOptions::from_config(c.model, c.speed));
    const double bound = c.optimizer.lr * 1.05;
    auto params = trained->named_parameters(), start = fresh->named_parameters();
    for (const auto& p : file->named_parameters()) {
      const double moved = (params[p.key()] - p.value()).abs().max().item<double>();
      QVERIFY2(moved <= bound, qPrintable(QString("%1 moved %2 > %3").arg(p.key().c_str()).arg(moved).arg(bound)));
      const bool random_init = p.key().find("ln") == std::string::npos && p.key().find("bias") == std::string::npos;
      if (random_init)  // LayerNorms start at 1 and 0, biases at 0, from any seed
        QVERIFY2((start[p.key()] - p.value()).abs().max().item<double>() > 10 * bound, p.key().c_str());
    }
  }

  void generateReadsAHuggingFaceFolder() {
    torch::manual_seed(5);
    Config c;  // the real vocabulary, so the tokenizer's ids fit
    apply_overrides(c, test::tiny_run_overrides());
    GPT m(GPTOptions::from_config(c.model, SpeedConfig{}));
    const std::string out = path("hf-generate");
    export_hf(*m, out);
    QVERIFY2(!test::asset("gpt2.tiktoken").empty(), "assets missing: run scripts/setup.sh");
    SampleOptions o;
    o.max_new_tokens = 6, o.seed = 3;
    Generation g = generate_from_checkpoint(out, "Hello", o, "cpu");
    QCOMPARE(QString::fromStdString(g.text), QString::fromStdString(sample_text(*m, "Hello", o, c10::kCPU)));
  }
};

QTEST_GUILESS_MAIN(TestGenerateHf)
#include "test_generate_hf.moc"
