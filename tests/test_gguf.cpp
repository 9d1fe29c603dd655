// GGUF export, checked by llama.cpp's own code: PyPI's gguf reader sees every tensor's name, shape, type and bytes
// as written (a quantized tensor made again by gguf's quantizer from the f32 export is byte for byte ours);
// llama.cpp (llama-cpp-python, built by the set-up) picks our greedy tokens and tokenizes text as we do; a model
// llama.cpp's GPT-2 cannot run is refused by name; an export killed midway leaves nothing behind.
#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <sys/stat.h>

#include <QtTest>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/config.h"
#include "engine/base/data/tokenizer.h"
#include "engine/base/util/files.h"
#include "engine/torch/generate/sampler.h"
#include "engine/torch/model/gguf_export.h"
#include "engine/torch/model/gguf_file.h"
#include "engine/torch/model/gpt.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using test::error_of;

namespace {

// GPT-2's vocabulary (the tokenizer goes inside), two layers, 64 wide (Q8_0 blocks rows of 32), 64 positions.
ModelConfig small_gpt2(bool tie = true, bool bias = true) {
  ModelConfig m = test::tiny_model(50257);
  m.n_embd = 64, m.context = 64, m.vocab_pad_multiple = 64;  // padded: the export must cut the padding off
  m.tie_weights = tie, m.qkv_bias = bias;
  return m;
}

// Weights far from their init (LayerNorms and biases too), so logits spread and a mapping mistake cannot hide.
GPT random_model(const ModelConfig& m, uint64_t seed) {
  torch::manual_seed(seed);
  GPT model(GPTOptions::from_config(m, SpeedConfig{}));
  at::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.normal_(0, 0.15);
  model->eval();
  return model;
}

// A reference script's JSON; null when its package is missing (exit 3), an exception when it failed.
nlohmann::json reference(const std::string& script, const std::string& args) {
  std::string json, err;  // llama.cpp logs to stderr: kept apart from the JSON, shown on failure
  QTemporaryFile log;
  log.open();
  const int code = test::run(test::python() + " " TOKAMAK_SOURCE_DIR "/tests/reference/" + script + " " + args + " 2>" +
                                 log.fileName().toStdString(),
                             &json);
  if (code == 3) return nullptr;
  if (code != 0) throw std::runtime_error(script + " failed: " + log.readAll().toStdString());
  return nlohmann::json::parse(json);
}

const char kPromptText[] = "The quick brown fox jumps over the lazy";
std::vector<int32_t> prompt() { return Tokenizer::gpt2().encode(kPromptText); }

std::vector<int32_t> our_greedy(GPTImpl& m, int64_t n) {
  SampleOptions o;
  o.top_k = 1, o.max_new_tokens = n, o.stop_at_end_of_text = false;
  return generate(m, prompt(), o, c10::kCPU);
}

std::string joined(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t i : ids) s += (s.empty() ? "" : ",") + std::to_string(i);
  return s;
}

// Held-out text the tokenizer must split as we do: contractions, digits, runs of spaces, accents, CJK, an emoji.
const char kText[] =
    "It's 2026, and naïve café owners don't count 12,345 tokens twice.\n\n   Indented\tline —  with\u00a0odd "
    "spacing;\r\n数学 is fun 😀!! 'quoted' words, e.g. GPT-2's BPE.  ";

bool file_exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

class TestGguf : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path(const std::string& n) const { return dir_.path().toStdString() + "/" + n; }

 private Q_SLOTS:
  // Every tensor where llama.cpp looks for it, each value where we put it: f32 exactly (the sums of what the reader
  // dequantizes are the model's); f16, bf16 and q8_0 byte for byte what gguf's own converters make of the f32 file.
  void readerSeesEveryTensorAsWritten_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<bool>("tie");
    QTest::newRow("f16, tied head") << "f16" << true;
    QTest::newRow("bf16, untied head") << "bf16" << false;
    QTest::newRow("q8_0, no biases") << "q8_0" << true;
  }
  void readerSeesEveryTensorAsWritten() {
    QFETCH(QString, type);
    QFETCH(bool, tie);
    const bool bias = type != "q8_0";
    const ModelConfig mc = small_gpt2(tie, bias);
    GPT m = random_model(mc, 5);
    const std::string f32 = path("read-" + type.toStdString() + "-f32.gguf"),
                      other = path("read-" + type.toStdString() + ".gguf");
    const GgufNaming naming{"my run", "uid-123", 42, "{\"model\":{}}"};
    export_gguf(*m, f32, GgmlType::kF32, naming);
    export_gguf(*m, other, parse_gguf_type(type.toStdString()), naming);
    const nlohmann::json plain = reference("gguf_reader.py", f32);
    if (plain.is_null()) QSKIP("PyPI's gguf is not in the set-up's venv: run scripts/setup.sh");
    const nlohmann::json typed = reference("gguf_reader.py", other + " " + f32);

    const auto& md = plain["metadata"];
    QCOMPARE(md["general.architecture"].get<std::string>(), std::string("gpt2"));
    QCOMPARE(md["general.name"].get<std::string>(), std::string("my run"));
    QCOMPARE(md["gpt2.block_count"].get<int>(), 2);
    QCOMPARE(md["gpt2.context_length"].get<int>(), 64);
    QCOMPARE(md["gpt2.embedding_length"].get<int>(), 64);
    QCOMPARE(md["gpt2.feed_forward_length"].get<int>(), 256);
    QCOMPARE(md["gpt2.attention.head_count"].get<int>(), 2);
    QCOMPARE(md["gpt2.attention.layer_norm_epsilon"].get<double>(), double(1e-5f));
    QCOMPARE(plain["types"]["gpt2.attention.layer_norm_epsilon"].get<std::string>(), std::string("FLOAT32"));
    QCOMPARE(plain["types"]["gpt2.block_count"].get<std::string>(), std::string("UINT32"));
    QCOMPARE(md["tokenizer.ggml.model"].get<std::string>(), std::string("gpt2"));
    QCOMPARE(md["tokenizer.ggml.pre"].get<std::string>(), std::string("gpt-2"));
    QCOMPARE(md["tokenizer.ggml.tokens"]["len"].get<int>(), 50257);
    QCOMPARE(md["tokenizer.ggml.tokens"]["first"].get<std::string>(), std::string("!"));
    QCOMPARE(md["tokenizer.ggml.tokens"]["last"].get<std::string>(), std::string("<|endoftext|>"));
    QCOMPARE(md["tokenizer.ggml.merges"]["len"].get<int>(), 50000);
    QCOMPARE(md["tokenizer.ggml.merges"]["first"].get<std::string>(), std::string("\xc4\xa0 t"));  // "Ġ t"
    QCOMPARE(md["tokenizer.ggml.token_type"]["last"].get<int>(), 3);  // <|endoftext|>: a control token
    QCOMPARE(md["tokenizer.ggml.eos_token_id"].get<int>(), 50256);
    QCOMPARE(md["tokamak.run_uid"].get<std::string>(), std::string("uid-123"));
    QCOMPARE(md["tokamak.step"].get<int>(), 42);
    QCOMPARE(md["general.file_type"].get<int>(), 0);
    const std::map<QString, int> file_types{{"f16", 1}, {"bf16", 32}, {"q8_0", 7}};
    QCOMPARE(typed["metadata"]["general.file_type"].get<int>(), file_types.at(type));

    // Names and shapes (ggml counts the innermost dimension first) of llama.cpp's GPT-2, and nothing else.
    std::map<std::string, std::vector<int64_t>> want{{"token_embd.weight", {64, 50257}},
                                                     {"position_embd.weight", {64, 64}},
                                                     {"output_norm.weight", {64}},
                                                     {"output_norm.bias", {64}}};
    if (!tie) want["output.weight"] = {64, 50257};
    for (int i = 0; i < 2; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".";
      for (const char* n : {"attn_norm", "ffn_norm"}) want[b + n + ".weight"] = {64}, want[b + n + ".bias"] = {64};
      want[b + "attn_qkv.weight"] = {64, 192}, want[b + "attn_qkv.bias"] = {192};
      want[b + "attn_output.weight"] = {64, 64}, want[b + "attn_output.bias"] = {64};
      want[b + "ffn_up.weight"] = {64, 256}, want[b + "ffn_up.bias"] = {256};
      want[b + "ffn_down.weight"] = {256, 64}, want[b + "ffn_down.bias"] = {64};
    }
    std::map<std::string, nlohmann::json> read, typed_read;
    for (const auto& t : plain["tensors"]) read[t["name"]] = t;
    for (const auto& t : typed["tensors"]) typed_read[t["name"]] = t;
    QCOMPARE(read.size(), want.size());
    QCOMPARE(typed_read.size(), want.size());

    // The model's own values, under llama.cpp's names, for the f32 sums.
    std::map<std::string, at::Tensor> ours;
    for (const auto& p : m->named_parameters()) {
      at::Tensor t = p.value().detach();
      if (p.key() == "wte.weight" || p.key() == "lm_head") t = t.narrow(0, 0, 50257);
      std::string k = p.key();
      if (k == "wte.weight") k = "token_embd.weight";
      else if (k == "wpe.weight") k = "position_embd.weight";
      else if (k == "lm_head") k = "output.weight";
      else if (k.rfind("ln_f.", 0) == 0) k = "output_norm." + k.substr(5);
      else {
        const std::string blk = "blk." + k.substr(7, 1) + ".", rest = k.substr(9);
        for (auto [from, to] : std::vector<std::pair<std::string, std::string>>{{"ln_1.", "attn_norm."},
                                                                                {"attn.c_attn.", "attn_qkv."},
                                                                                {"attn.c_proj.", "attn_output."},
                                                                                {"ln_2.", "ffn_norm."},
                                                                                {"c_fc.", "ffn_up."},
                                                                                {"c_proj.", "ffn_down."}})
          if (rest.rfind(from, 0) == 0) {
            k = blk + to + rest.substr(from.size());
            break;
          }
      }
      ours[k] = t.to(at::kDouble);
    }
    for (const auto& [name, shape] : want) {
      QVERIFY2(read.count(name), name.c_str());
      const nlohmann::json& t = read[name];
      QCOMPARE(t["shape"].get<std::vector<int64_t>>(), shape);
      QCOMPARE(t["type"].get<std::string>(), std::string("F32"));
      QCOMPARE(t["offset"].get<int64_t>() % 32, int64_t{0});
      const at::Tensor v = ours.count(name) ? ours[name] : at::zeros({shape[0]}, at::kDouble);  // a zero bias
      QVERIFY2(ours.count(name) || !bias, name.c_str());
      const double sum = v.sum().item<double>(), sumsq = (v * v).sum().item<double>();
      QVERIFY2(std::abs(t["sum"].get<double>() - sum) <= 1e-9 * std::max(1.0, sumsq), name.c_str());
      QVERIFY2(std::abs(t["sumsq"].get<double>() - sumsq) <= 1e-9 * std::max(1.0, sumsq), name.c_str());
      QCOMPARE(t["first"][0].get<double>(), v.reshape(-1)[0].item<double>());

      // The typed file: matrices in the type (position table, norms and biases f32), bytes as gguf makes them.
      const nlohmann::json& q = typed_read[name];
      const bool matrix = shape.size() == 2 && name != "position_embd.weight";
      const std::string want_type = matrix ? type.toUpper().toStdString() : "F32";
      QCOMPARE(q["type"].get<std::string>(), want_type);
      QCOMPARE(q["shape"].get<std::vector<int64_t>>(), shape);
      if (matrix) QVERIFY2(q.value("same_bytes", false), (name + " differs from gguf's own " + want_type).c_str());
    }
  }

  // llama.cpp itself loads the f32 file and picks the same 24 greedy tokens, with logits within 1e-3 of ours (its
  // CPU GELU reads an fp16 table: 1.7e-4 seen on logits spanning 2.0); the
  // q8_0 file's logits stay within 2% of their range and its first 8 greedy tokens are ours (stated agreement).
  void llamaCppPicksOurGreedyTokens() {
    GPT m = random_model(small_gpt2(), 7);
    const std::vector<int32_t> ours = our_greedy(*m, 24);
    at::Tensor logits;
    {
      at::NoGradGuard no_grad;
      const std::vector<int32_t> p = prompt();
      logits =
          m->forward(at::tensor(std::vector<int64_t>(p.begin(), p.end())).view({1, -1})).logits[0][-1].to(at::kDouble);
    }
    const std::string text = path("text.txt");
    write_file_atomically(text, kText);
    for (const char* type : {"f32", "q8_0"}) {
      const std::string file = path(std::string("greedy-") + type + ".gguf");
      export_gguf(*m, file, parse_gguf_type(type), {"greedy", "", 0, "{}"});
      const nlohmann::json ref = reference("llama_cpp_reference.py", file + " " + joined(prompt()) + " 24 " + text);
      if (ref.is_null()) QSKIP("llama.cpp (PyPI's llama-cpp-python) is not in the set-up's venv: run scripts/setup.sh");
      const at::Tensor theirs = at::tensor(ref["logits"].get<std::vector<double>>(), at::kDouble);
      QCOMPARE(theirs.size(0), int64_t{50257});
      const double diff = (theirs - logits).abs().max().item<double>();
      const double range = (logits.max() - logits.min()).item<double>();
      const std::vector<int32_t> greedy = ref["greedy"].get<std::vector<int32_t>>();
      qInfo("%s: largest logit difference %.2e (range %.1f); greedy %s, ours %s", type, diff, range,
            joined(greedy).c_str(), joined(ours).c_str());
      if (std::string(type) == "f32") {
        QVERIFY2(diff < 1e-3, qPrintable(QString::number(diff)));
        QCOMPARE(greedy, ours);
      } else {
        QVERIFY2(diff < 0.02 * range, qPrintable(QString::number(diff)));
        QCOMPARE(std::vector<int32_t>(greedy.begin(), greedy.begin() + 8),
                 std::vector<int32_t>(ours.begin(), ours.begin() + 8));
      }
      // The tokenizer inside the file splits held-out text exactly as ours (and so as OpenAI's) does.
      QCOMPARE(ref["tokens"].get<std::vector<int32_t>>(), Tokenizer::gpt2().encode(kText));
    }
  }

  // Each switch llama.cpp's GPT-2 has no place for is named in one line, and no file is left.
  void whatLlamaCppCannotRunIsRefused_data() {
    QTest::addColumn<QString>("key");
    QTest::addColumn<QString>("named");
    QTest::newRow("RMSNorm") << "model.norm=rmsnorm"
                             << "model.norm=rmsnorm";
    QTest::newRow("ReLU²") << "model.mlp_act=relu2"
                           << "model.mlp_act=relu2";
    QTest::newRow("RoPE") << "model.position=rope"
                          << "model.position=rope";
    QTest::newRow("QK-norm") << "model.qk_norm=true"
                             << "model.qk_norm=true";
    QTest::newRow("soft-cap") << "model.logit_softcap=15"
                              << "model.logit_softcap=15";
    QTest::newRow("U-net skips") << "model.unet_skips=true"
                                 << "model.unet_skips=true";
    QTest::newRow("value embeddings") << "model.value_embeddings=1"
                                      << "model.value_embeddings=1";
    QTest::newRow("not GPT-2's vocabulary") << "model.vocab_size=512"
                                            << "vocabulary has 512 tokens";
  }
  void whatLlamaCppCannotRunIsRefused() {
    QFETCH(QString, key);
    QFETCH(QString, named);
    Config c;
    c.model = small_gpt2();
    apply_overrides(c, {key.toStdString()});
    if (c.model.unet_skips) c.model.n_layer = 4;
    torch::manual_seed(1);
    GPT m(GPTOptions::from_config(c.model, c.speed));
    const std::string file = path("refused.gguf");
    const QString e = error_of([&] { export_gguf(*m, file, GgmlType::kF16, {"x", "", 0, "{}"}); });
    QVERIFY2(e.contains(named) && !e.contains('\n'), qPrintable(e));
    QVERIFY(!file_exists(file));
  }

  // A run trained from the command line, exported by its id from the store: llama.cpp continues a prompt with
  // the tokens `tokamak generate --top-k 1` prints, and the file is named after the run.
  void aStoredRunExportsAndLlamaCppAgreesWithGenerate() {
    QVERIFY2(QFile::exists(test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const QString db = QString::fromStdString(env.path("runs.db"));
    test::CliResult t =
        test::run_tokamak(QStringList{"train", "--json", "--db", db, "--name", "gguf run"} +
                          test::set_args(test::quiet_run_overrides("", 30, {"checkpoint.dir=" + env.path("ckpt")})));
    QVERIFY2(t.code == 0, t.err.constData());
    QString checkpoint;
    for (const nlohmann::json& ev : t.json_lines())
      if (ev.is_object() && ev.value("event", "") == "checkpoint")
        checkpoint = QString::fromStdString(ev.value("path", ""));
    QVERIFY(!checkpoint.isEmpty());
    const QString out = QString::fromStdString(env.path("models"));
    QDir().mkpath(out);
    test::CliResult e =
        test::run_tokamak({"export", "--run", "1", "--db", db, "--format", "gguf", "--type", "f32", "--out", out});
    QVERIFY2(e.code == 0, e.err.constData());
    const std::string file = env.path("models/gguf run-f32.gguf");
    QVERIFY2(file_exists(file), e.err.constData());
    QVERIFY2(e.err.contains("(step 30)"), e.err.constData());
    // A step the run never saved, and a run that is not there: one line each.
    test::CliResult bad =
        test::run_tokamak({"generate", "--run", "1", "--db", db, "--step", "3", "--prompt", "x", "--tokens", "1"});
    QVERIFY2(bad.code != 0 && bad.err.contains("run 1 has no checkpoint at step 3") &&
                 bad.err.contains("its checkpoints: 30"),
             bad.err.constData());
    bad = test::run_tokamak({"export", "--run", "7", "--db", db, "--format", "gguf", "--out", out});
    QVERIFY2(bad.code != 0 && bad.err.contains("7") && !bad.err.contains('\n' + QByteArray("tokamak")),
             bad.err.constData());

    test::CliResult g = test::run_tokamak(
        {"generate", "--checkpoint", checkpoint, "--prompt", kPromptText, "--top-k", "1", "--tokens", "16", "--ids"});
    QVERIFY2(g.code == 0, g.err.constData());
    std::vector<int32_t> ours;
    for (const QString& s : g.out_text().split(' ', Qt::SkipEmptyParts)) ours.push_back(s.trimmed().toInt());
    QVERIFY(!ours.empty());
    if (ours.size() > 16) ours.resize(16);  // tokens that finish a UTF-8 character come after the 16
    // (fewer than 16 when the model wrote <|endoftext|>, where `generate` stops and llama.cpp goes on)
    const std::string text = env.path("text.txt");
    write_file_atomically(text, kText);
    const nlohmann::json ref =
        reference("llama_cpp_reference.py", "'" + file + "' " + joined(prompt()) + " 16 " + text);
    if (ref.is_null()) QSKIP("llama.cpp (PyPI's llama-cpp-python) is not in the set-up's venv: run scripts/setup.sh");
    std::vector<int32_t> greedy = ref["greedy"].get<std::vector<int32_t>>();
    greedy.resize(ours.size());
    QCOMPARE(greedy, ours);
    const nlohmann::json md = reference("gguf_reader.py", "'" + file + "'")["metadata"];
    QCOMPARE(md["general.name"].get<std::string>(), std::string("gguf run"));
    QCOMPARE(md["tokamak.step"].get<int>(), 30);
    QVERIFY(!md["tokamak.run_uid"].get<std::string>().empty());
    // Its checkpoint deleted: said, and nothing written.
    QVERIFY(QFile::remove(checkpoint));
    test::CliResult gone =
        test::run_tokamak({"export", "--run", "1", "--db", db, "--format", "gguf", "--out", out + "/after.gguf"});
    QVERIFY2(gone.code != 0 && gone.err.contains("is gone"), gone.err.constData());
    QVERIFY(!file_exists(env.path("models/after.gguf")));
  }

  // Killed in the middle of writing (here by the file-size limit's SIGXFSZ, at 1 MB): no file where it was going,
  // no temporary beside it, and a file that was there before is still whole.
  void anExportKilledMidwayLeavesNoFile() {
    QVERIFY2(QFile::exists(test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    const std::string ckpt = test::save_tiny_checkpoint(path("kill-ckpt"), 3, "uid-kill");
    const std::string folder = path("kill-out");
    make_dirs(folder);
    const std::string file = folder + "/model.gguf";
    auto export_limited = [&](const std::string& limit_kb) {
      return test::run("bash -c 'ulimit -f " + limit_kb +
                       "; exec \"$0\" export --checkpoint \"$1\" --format gguf --type f32 --out \"$2\"' '" +
                       test::tokamak_bin().toStdString() + "' '" + ckpt + "' '" + file + "' 2>&1");
    };
    QVERIFY(export_limited("1024") != 0);  // killed
    QCOMPARE(QDir(QString::fromStdString(folder)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList{});
    QCOMPARE(export_limited("unlimited"), 0);
    const std::string whole = read_file(file);
    QVERIFY(whole.size() > 6'000'000);
    QVERIFY(export_limited("1024") != 0);
    QCOMPARE(QDir(QString::fromStdString(folder)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
             QStringList{"model.gguf"});
    QVERIFY(read_file(file) == whole);
  }

  // Bad input is named before any work: a type, a format, no model, both models.
  void badArgumentsAreOneLine() {
    QVERIFY2(QFile::exists(test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    const std::string ckpt = test::save_tiny_checkpoint(path("bad-ckpt"), 1, "uid-bad");
    const QString c = QString::fromStdString(ckpt), out = QString::fromStdString(path("bad.gguf"));
    test::CliResult r =
        test::run_tokamak({"export", "--checkpoint", c, "--format", "gguf", "--type", "q4", "--out", out});
    QVERIFY(r.code != 0 && r.err.contains("GGUF type 'q4' is not known") && r.err.contains("q8_0"));
    r = test::run_tokamak({"export", "--checkpoint", c, "--format", "onnx", "--out", out});
    QVERIFY(r.code != 0 && r.err.contains("export format 'onnx' is not known"));
    r = test::run_tokamak({"export", "--format", "gguf", "--out", out});
    QVERIFY2(r.code != 0 && r.err.contains("give --checkpoint PATH or --run ID"), r.err.constData());
    r = test::run_tokamak({"export", "--checkpoint", c, "--run", "1", "--format", "gguf", "--out", out});
    QVERIFY2(r.code != 0 && r.err.contains("give one of them"), r.err.constData());
    QVERIFY(!file_exists(path("bad.gguf")));
  }

  // Q8_0 blocks: scale amax/127 in fp16, values rounded half away from zero, zeros stay zeros.
  void q8BlocksAsGgmlMakesThem() {
    std::vector<float> x(64);
    for (int i = 0; i < 32; ++i) x[i] = (i - 16) * 0.5f;  // amax 8: d = 8/127; 0.5 → 7.9375 → 8
    std::vector<uint8_t> q(ggml_bytes(GgmlType::kQ8_0, 64));
    QCOMPARE(q.size(), size_t{68});
    quantize_q8_0(x.data(), 64, q.data());
    at::Half d;
    std::memcpy(&d.x, q.data(), 2);
    QCOMPARE(float(d), float(at::Half(8.f / 127.f)));
    QCOMPARE(int(int8_t(q[2])), -127);    // -8
    QCOMPARE(int(int8_t(q[2 + 17])), 8);  // 0.5 · 127/8 = 7.94
    QCOMPARE(int(int8_t(q[2 + 16])), 0);
    for (int j = 0; j < 34; ++j) QCOMPARE(int(q[34 + j]), 0);  // an all-zero block: d = 0, q = 0
    QVERIFY(!ggml_fits(GgmlType::kQ8_0, 48));
    QVERIFY(ggml_fits(GgmlType::kF16, 48));
  }
};

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"
