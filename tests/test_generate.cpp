// Generation: the KV cache gives the logits and the greedy tokens of the full-window forward (also once the
// text outgrows the context), top-p samples from each step's nucleus, a streamed text is the whole text, and
// "load a checkpoint and sample" gives what sampling the trained model gives.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <unistd.h>

#include <set>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/config.h"
#include "engine/torch/generate/generate.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/store/queue_lock.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

GPTOptions tiny(const std::string& attention, int64_t vocab = 64) {
  ModelConfig m = test::tiny_model(vocab);
  SpeedConfig o;
  o.attention = find_choice(attention_choices(), "speed.attention", attention).kind;
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

  // Top-p keeps the fewest most likely tokens whose probabilities reach p: a tiny p is the argmax every step (top-k 1,
  // whatever the seed); at 0.5 every sampled token lies in its step's nucleus, computed here from the model; each
  // token reaches on_token as it is made.
  void topPSamplesFromTheNucleus() {
    torch::manual_seed(9);
    GPT m(tiny("sdpa"));
    {
      torch::NoGradGuard no_grad;
      for (auto& p : m->parameters()) p.normal_(0, 0.5);
    }
    const std::vector<int32_t> prompt{3, 14, 15, 9, 2};
    SampleOptions greedy;
    greedy.top_k = 1, greedy.max_new_tokens = 10, greedy.stop_at_end_of_text = false;
    SampleOptions tiny_p = greedy;
    tiny_p.top_k = 0, tiny_p.top_p = 1e-6, tiny_p.temperature = 1.0;
    const auto argmax = generate(*m, prompt, greedy, c10::kCPU);
    for (uint64_t seed : {1, 2, 3}) {
      tiny_p.seed = seed;
      QCOMPARE(generate(*m, prompt, tiny_p, c10::kCPU), argmax);
    }
    SampleOptions half = tiny_p;
    half.top_p = 0.5, half.max_new_tokens = 30, half.seed = 11;
    int streamed = 0;
    half.on_token = [&](const std::vector<int32_t>& out) { QCOMPARE(int(out.size()), ++streamed); };
    const auto out = generate(*m, prompt, half, c10::kCPU);
    QCOMPARE(streamed, 30);
    std::vector<int64_t> ids(prompt.begin(), prompt.end());
    torch::NoGradGuard no_grad;
    m->eval();
    int outside = 0, distinct = 0;
    std::set<int32_t> seen;
    for (int32_t token : out) {
      const int64_t start = std::max<int64_t>(0, int64_t(ids.size()) - 16);
      auto idx = at::tensor(std::vector<int64_t>(ids.begin() + start, ids.end()), at::kLong).view({1, -1});
      auto probs = at::softmax(m->forward(idx).logits.select(1, -1).squeeze(0).to(at::kFloat), 0);
      auto [sorted, order] = probs.sort(0, true);
      const auto before = (sorted.cumsum(0) - sorted);
      bool inside = false;
      for (int64_t r = 0; r < sorted.size(0) && before[r].item<float>() < 0.5f; ++r)
        inside = inside || order[r].item<int64_t>() == token;
      outside += !inside;
      distinct += seen.insert(token).second;
      ids.push_back(token);
    }
    QCOMPARE(outside, 0);
    QVERIFY(distinct > 1);  // it sampled, not a constant
    SampleOptions bad = half;
    bad.top_p = 0;
    QVERIFY(test::error_of([&] { generate(*m, prompt, bad, c10::kCPU); }).contains("top-p must be in (0, 1]"));
  }

  // `tokamak generate --stream` prints the text as it is made, and it is the same text as without it.
  void aStreamIsTheSameText() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const QString ck = QString::fromStdString(test::save_tiny_checkpoint(env.path("ck"), 1, "stream0000000001", 5));
    const QStringList args{"generate", "--checkpoint", ck, "--prompt", "The hacker", "--tokens", "40", "--seed", "4",
                           "--top-p", "0.9"};
    const test::CliResult whole = test::run_tokamak(args), streamed = test::run_tokamak(args + QStringList{"--stream"});
    QVERIFY2(whole.code == 0 && streamed.code == 0, (whole.err + streamed.err).constData());
    QVERIFY(whole.out.startsWith("The hacker") && whole.out.size() > 12);
    QCOMPARE(streamed.out, whole.out);
    // A count too big for any int gets a range message, not CLI11's own words.
    const test::CliResult huge = test::run_tokamak({"generate", "--checkpoint", ck, "--prompt", "x", "--tokens",
                                                    "99999999999999999999"});
    QVERIFY2(huge.code != 0 && huge.err.contains("out of range") && huge.err.contains("from 1 to 1000000"),
             huge.err.constData());
    // The same for every whole number (each was clamped to the largest int64 and taken), and top-p is refused
    // before the model loads.
    const QList<QStringList> refused{{"--top-k", "99999999999999999999", "out of range"},
                                     {"--seed", "99999999999999999999", "out of range"},
                                     {"--seed", "-1", "out of range"},
                                     {"--step", "99999999999999999999", "out of range"},
                                     {"--top-p", "0", "must be more than 0"},
                                     {"--top-p", "nan", "is not a number"},
                                     {"--top-p", "1.5", "must be at most 1"}};
    for (const QStringList& r : refused) {
      const test::CliResult bad =
          test::run_tokamak({"generate", "--run", "1", "--prompt", "x", r[0], r[1], "--db", QString::fromStdString(env.path("none.db"))});
      QVERIFY2(bad.code != 0 && bad.err.contains(r[0].toUtf8()) && bad.err.contains(r[2].toUtf8()) &&
                   bad.err.trimmed().count('\n') == 0,
               qPrintable(r.join(' ') + ": " + bad.err));
    }
  }

  // --keep on a store that cannot take the try now (an older Tokamak's queue worker holds it: it is opened
  // read-only) is refused before any text is made, with the reason; nothing is printed as if it were kept.
  void keepIsRefusedBeforeTheTextWhenTheStoreCannotTakeIt() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string db = env.path("runs.db");
    const std::string ck = test::save_tiny_checkpoint(env.path("ck"), 7, "keep000000000001", 5);
    {
      RunStore store(db);
      RunStart start;
      start.run_uid = "keep000000000001", start.name = "kept", start.config_json = "{}";
      const int64_t id = store.begin_run(start, 1717000000, 1);
      store.add_checkpoint(id, {7, ck, 1717000001});
      store.end_run(id, "finished", "", 1717000002);
    }
    {  // the store as 0.3.0 left it (schema 8: no playground, no requeue count)
      Db raw(db);
      raw.exec("DROP TABLE playground; ALTER TABLE queue DROP COLUMN requeues; PRAGMA user_version = 8");
    }
    const int lock = take_queue_lock(db);  // an older worker: the lock, and a note of its pid alone
    QVERIFY(lock >= 0);
    write_file_atomically(queue_lock_path(db) + ".pid", std::to_string(::getpid()) + "\n");
    const test::CliResult r =
        test::run_tokamak({"generate", "--run", "1", "--db", QString::fromStdString(db), "--prompt", "The", "--keep"});
    ::close(lock);
    QVERIFY2(r.code != 0 && r.err.contains("--keep: the run store") && r.err.contains("cannot keep tries now") &&
                 r.err.contains("older Tokamak"),
             r.err.constData());
    QVERIFY2(r.out.isEmpty(), r.out.constData());
    // Once the worker is gone the store is migrated, and the same command keeps its try.
    const test::CliResult kept =
        test::run_tokamak({"generate", "--run", "1", "--db", QString::fromStdString(db), "--prompt", "The", "--keep",
                           "--tokens", "4"});
    QVERIFY2(kept.code == 0 && kept.err.contains("kept with run 1"), kept.err.constData());
  }

  // A try kept from a prompt that is not UTF-8 (a terminal in Latin-1) is stored repaired, so an export and import
  // give the same stored bytes back: the JSON export writes UTF-8 only, and a raw byte would come back otherwise.
  void aKeptTryOfStrayBytesRoundTrips() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string db = env.path("runs.db"), db2 = env.path("imported.db"), json = env.path("runs.json");
    const std::string ck = test::save_tiny_checkpoint(env.path("ck"), 7, "utf8000000000001", 5);
    {
      RunStore store(db);
      RunStart start;
      start.run_uid = "utf8000000000001", start.name = "latin", start.config_json = "{}";
      const int64_t id = store.begin_run(start, 1717000000, 1);
      store.add_checkpoint(id, {7, ck, 1717000001});
      store.end_run(id, "finished", "", 1717000002);
    }
    // No QString on the way: the shell's printf puts the raw bytes 0xE9 and 0xFF into the argument.
    const test::CliResult kept = test::run_program(
        "/bin/sh", {"-c", "exec \"$0\" generate --run 1 --db \"$1\" --keep --tokens 4 --prompt \"$(printf 'caf\\351 \\377')\"",
                    test::tokamak_bin(), QString::fromStdString(db)});
    QVERIFY2(kept.code == 0 && kept.err.contains("kept with run 1"), kept.err.constData());
    QCOMPARE(test::tokamak_line("runs export --format json --out " + json + " --db " + db), 0);
    QCOMPARE(test::tokamak_line("runs import " + json + " --db " + db2), 0);
    RunStore before(db), after(db2);
    const std::vector<PlayRow> a = before.plays(before.run_ids().front()), b = after.plays(after.run_ids().front());
    QCOMPARE(a.size(), size_t{1});
    QCOMPARE(b.size(), size_t{1});
    QCOMPARE(b[0].prompt, a[0].prompt);
    QCOMPARE(b[0].text, a[0].text);
    QCOMPARE(b[0].options_json, a[0].options_json);
    QCOMPARE(a[0].prompt, std::string("caf\xef\xbf\xbd \xef\xbf\xbd"));  // each stray byte as U+FFFD
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
