// Evaluation (engine/torch/eval): HellaSwag scoring equals a slow one-row-at-a-time reference, accuracy follows
// llm.c's definitions (acc by the sum, acc_norm by the mean log-likelihood) with Wilson intervals checked
// against Newcombe's published values, a model trained on the right endings gets every item right, malformed
// lines are one-line errors naming the line, and perplexity is exp of the per-token mean of hand-computed
// window losses. Then the `tokamak eval` command and the store.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/base/config/config.h"
#include "engine/base/config/eval_tasks.h"
#include "engine/base/data/shard.h"
#include "engine/base/data/tokenizer.h"
#include "engine/torch/eval/accuracy.h"
#include "engine/torch/eval/eval_task.h"
#include "engine/torch/eval/hellaswag_items.h"
#include "engine/torch/eval/perplexity.h"
#include "engine/torch/eval/scoring.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/store/run_export.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/store_sink.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/cli_runner.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

const std::string kTinyItems = TOKAMAK_SOURCE_DIR "/tests/data/hellaswag_tiny.jsonl";

GPTOptions tiny_gpt2(int64_t context) {
  ModelConfig m = test::tiny_model(50257);  // GPT-2's tokenizer, so the items' ids are in range
  m.context = context;
  return GPTOptions::from_config(m, SpeedConfig{});
}

// The obviously-correct reference: one row (context + ending), one forward, log-softmax, and the sum over the
// ending's tokens. A row longer than the window keeps its last context + 1 tokens; the row's first token is
// never predicted.
EndingScore reference_score(GPTImpl& model, const ChoiceItem& item, size_t k) {
  std::vector<int64_t> row(item.context.begin(), item.context.end());
  row.insert(row.end(), item.endings[k].begin(), item.endings[k].end());
  const size_t keep = static_cast<size_t>(model.options().context) + 1;
  if (row.size() > keep) row.erase(row.begin(), row.end() - static_cast<std::ptrdiff_t>(keep));
  const size_t first_ending = row.size() - item.endings[k].size();
  at::Tensor inputs = at::tensor(std::vector<int64_t>(row.begin(), row.end() - 1), at::kLong).unsqueeze(0);
  at::NoGradGuard no_grad;
  at::Tensor lp = at::log_softmax(model.forward(inputs).logits[0].to(at::kDouble), -1);
  EndingScore s;
  for (size_t j = std::max<size_t>(1, first_ending); j < row.size(); ++j) {
    s.sum_logprob += lp[static_cast<int64_t>(j - 1)][row[j]].item<double>();
    ++s.tokens;
  }
  s.mean_logprob = s.sum_logprob / static_cast<double>(s.tokens);
  return s;
}

EndingScore score(double sum, int64_t tokens) { return {sum, sum / static_cast<double>(tokens), tokens}; }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

}  // namespace

class TestEval : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void scoringEqualsTheOneRowReference_data() {
    QTest::addColumn<int>("context");
    QTest::addColumn<int>("rows");
    QTest::newRow("rows fit, 5 per batch") << 64 << 5;  // batches straddle items: padding and masks differ
    QTest::newRow("rows fit, 1 per batch") << 64 << 1;
    QTest::newRow("short window drops the context's start") << 16 << 7;
  }
  void scoringEqualsTheOneRowReference() {
    QFETCH(int, context);
    QFETCH(int, rows);
    torch::manual_seed(3);
    GPT model(tiny_gpt2(context));
    const std::vector<ChoiceItem> items = read_hellaswag(kTinyItems);
    QCOMPARE(items.size(), size_t{6});
    ScoreOptions so;
    so.rows_per_batch = rows;
    int64_t last_done = 0;
    bool ordered = true;
    so.progress = [&](int64_t done, int64_t total) {
      ordered = ordered && done >= last_done && total == 6;
      last_done = done;
      return true;
    };
    const auto scores = score_choices(*model, items, so);
    QVERIFY(ordered);
    QCOMPARE(last_done, int64_t{6});
    for (size_t i = 0; i < items.size(); ++i)
      for (size_t k = 0; k < 4; ++k) {
        const EndingScore want = reference_score(*model, items[i], k);
        const EndingScore& got = scores[i][k];
        QCOMPARE(got.tokens, want.tokens);
        QVERIFY2(std::abs(got.sum_logprob - want.sum_logprob) < 1e-3,
                 qPrintable(
                     QString("item %1 ending %2: %3 vs %4").arg(i).arg(k).arg(got.sum_logprob).arg(want.sum_logprob)));
        QVERIFY(std::abs(got.mean_logprob - want.mean_logprob) < 1e-4);
      }
  }

  void tokenizedAsLlmc() {
    // llm.c: the context's tokens, then each ending encoded with a leading space.
    const std::vector<ChoiceItem> items = read_hellaswag(kTinyItems, 1);
    QCOMPARE(items.size(), size_t{1});
    QCOMPARE(items[0].line, int64_t{1});
    QCOMPARE(items[0].label, int64_t{0});
    const Tokenizer& tok = Tokenizer::gpt2();  // equal to tiktoken (test_tokenizer)
    QVERIFY(items[0].context == tok.encode("A woman fills a kettle with water. She"));
    QVERIFY(items[0].endings[0] == tok.encode(" puts the kettle on the stove and waits for it to boil."));
    QVERIFY(items[0].endings[0].front() != tok.encode("puts the kettle").front());  // the space is in the token
  }

  void accuracyUsesSumForAccAndMeanForAccNorm() {
    // Four items whose predictions are worked out by hand:
    //  A (label 2): sums pick 2 (-8 highest); means pick 1 (-12/8 = -1.5)        → acc ✓, acc_norm ✗
    //  B (label 1): sums pick 0 (-5);        means pick 1 (-6/6 = -1)            → acc ✗, acc_norm ✓
    //  C (label 0): sums tie at -3 for 0 and 1, the first wins; means tie too    → acc ✓, acc_norm ✓
    //  D (label 3): sums pick 3 (-1); means pick 0 (-0.1, set below, > -1/2)     → acc ✓, acc_norm ✗
    std::vector<std::vector<EndingScore>> s = {
        {score(-10, 4), score(-12, 8), score(-8, 2), score(-20, 4)},
        {score(-5, 1), score(-6, 6), score(-7, 1), score(-8, 1)},
        {score(-3, 3), score(-3, 3), score(-4, 1), score(-5, 1)},
        {score(-2, 20), score(-9, 1), score(-9, 1), score(-1, 2)},
    };
    s[3][0].mean_logprob = -0.1;  // as if a long ending: only the mean matters here
    const ChoiceAccuracy a = choice_accuracy(s, {2, 1, 0, 3});
    QCOMPARE(a.n, int64_t{4});
    QCOMPARE(a.correct, int64_t{3});
    QCOMPARE(a.correct_norm, int64_t{2});
    QCOMPARE(a.acc, 0.75);
    QCOMPARE(a.acc_norm, 0.5);
  }

  void wilsonIntervalMatchesNewcombe_data() {
    // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I, method 3.
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<double>("low");
    QTest::addColumn<double>("high");
    QTest::newRow("81/263") << 81 << 263 << 0.2553 << 0.3662;
    QTest::newRow("15/148") << 15 << 148 << 0.0624 << 0.1605;
    QTest::newRow("0/20") << 0 << 20 << 0.0 << 0.1611;
    QTest::newRow("1/29") << 1 << 29 << 0.0061 << 0.1718;
  }
  void wilsonIntervalMatchesNewcombe() {
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(double, low);
    QFETCH(double, high);
    const Interval i = wilson_interval(k, n);
    QVERIFY2(std::abs(i.low - low) < 5e-5 && std::abs(i.high - high) < 5e-5,
             qPrintable(QString("[%1, %2]").arg(i.low).arg(i.high)));
  }

  void malformedLinesNameTheLine_data() {
    QTest::addColumn<QString>("line");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not JSON") << R"({"ctx": "a", )"
                              << "not valid JSON";
    QTest::newRow("not an object") << R"([1, 2])"
                                   << "is not a JSON object";
    QTest::newRow("no ctx") << R"({"endings": ["a","b","c","d"], "label": 0})"
                            << "has no \"ctx\"";
    QTest::newRow("ctx a number") << R"({"ctx": 5, "endings": ["a","b","c","d"], "label": 0})"
                                  << "\"ctx\" is not a string";
    QTest::newRow("empty ctx") << R"({"ctx": "", "endings": ["a","b","c","d"], "label": 0})"
                               << "\"ctx\" is empty";
    QTest::newRow("three endings") << R"({"ctx": "x", "endings": ["a","b","c"], "label": 0})"
                                   << "array of 4 strings";
    QTest::newRow("ending a number") << R"({"ctx": "x", "endings": ["a",2,"c","d"], "label": 0})"
                                     << "ending 1 is not a string";
    QTest::newRow("no label") << R"({"ctx": "x", "endings": ["a","b","c","d"]})"
                              << "has no \"label\"";
    QTest::newRow("label 4") << R"({"ctx": "x", "endings": ["a","b","c","d"], "label": 4})"
                             << "not in 0..3";
    QTest::newRow("label a word") << R"({"ctx": "x", "endings": ["a","b","c","d"], "label": "two"})"
                                  << "not an integer";
  }
  void malformedLinesNameTheLine() {
    QFETCH(QString, line);
    QFETCH(QString, expected);
    test::ScratchEnv env;
    const std::string path = env.path("items.jsonl");
    // A good line, a blank line (allowed), then the bad one: line 3.
    write_text(path, R"({"ctx": "x", "endings": ["a","b","c","d"], "label": 1})"
                     "\n\n" +
                         line.toStdString() + "\n");
    const QString err = test::error_of([&] { read_hellaswag(path); });
    QVERIFY2(err.contains("items.jsonl' line 3: ") && err.contains(expected), qPrintable(err));
    QVERIFY2(err.contains("hint:") && !err.contains('\n'), qPrintable(err));
  }

  void blankLinesAreSkippedAndLimitCounts() {
    test::ScratchEnv env;
    const std::string path = env.path("items.jsonl");
    const std::string item = R"({"ctx": "x", "endings": ["a","b","c","d"], "label": "2"})";
    write_text(path, "\n" + item + "\n   \n" + item + "\n" + item + "\n\n");
    const auto all = read_hellaswag(path);
    QCOMPARE(all.size(), size_t{3});
    QCOMPARE(all[1].line, int64_t{4});
    QCOMPARE(all[2].label, int64_t{2});  // a label written as a string is read too
    QCOMPARE(read_hellaswag(path, 2).size(), size_t{2});
    write_text(path, "\n\n");
    QVERIFY(test::error_of([&] { read_hellaswag(path); }).contains("holds no items"));
  }

  void endingLongerThanTheWindowIsRefused() {
    torch::manual_seed(1);
    GPT model(tiny_gpt2(4));
    const QString err = test::error_of([&] { score_choices(*model, read_hellaswag(kTinyItems, 1), {}); });
    QVERIFY2(err.contains("line 1") && err.contains("more than the model's context of 4"), qPrintable(err));
  }

  void perplexityIsExpOfTheTokenMeanOfWindowLosses() {
    test::ScratchEnv env;
    torch::manual_seed(5);
    GPT model(GPTOptions::from_config(test::tiny_model(64), SpeedConfig{}));  // context 16
    model->eval();
    // Shard a: 3 full windows (49 tokens); shard b: a full window and a last one of 5 (22 tokens).
    const std::vector<int64_t> sizes = {49, 22};
    std::vector<std::string> paths;
    std::vector<std::vector<uint16_t>> data;
    for (int64_t n : sizes) {
      at::Tensor t = at::randint(64, {n}, at::kLong);
      data.emplace_back();
      for (int64_t j = 0; j < n; ++j) data.back().push_back(static_cast<uint16_t>(t[j].item<int64_t>()));
      paths.push_back(env.path("s" + std::to_string(paths.size()) + ".bin"));
      write_shard(paths.back(), data.back());
    }
    // By hand: every window's mean loss from the model's own loss, weighted by its length.
    double loss_sum = 0;
    int64_t tokens = 0, windows = 0;
    at::NoGradGuard no_grad;
    for (const auto& d : data)
      for (size_t start = 0; start + 1 < d.size(); start += 16) {
        const size_t len = std::min<size_t>(16, d.size() - 1 - start);
        std::vector<int64_t> in(d.begin() + start, d.begin() + start + len),
            tg(d.begin() + start + 1, d.begin() + start + len + 1);
        const double window_loss =
            model->forward(at::tensor(in).unsqueeze(0), at::tensor(tg).unsqueeze(0)).loss.item<double>();
        loss_sum += window_loss * static_cast<double>(len);
        tokens += static_cast<int64_t>(len), ++windows;
      }
    QCOMPARE(windows, int64_t{3 + 2});
    QCOMPARE(tokens, int64_t{48 + 21});
    PerplexityOptions po;
    po.rows_per_batch = 2;
    const PerplexityResult r = perplexity(*model, paths, po);
    QCOMPARE(r.tokens, tokens);
    QCOMPARE(r.windows, windows);
    QVERIFY2(std::abs(r.loss - loss_sum / static_cast<double>(tokens)) < 1e-5, qPrintable(QString::number(r.loss)));
    QVERIFY(std::abs(r.ppl - std::exp(loss_sum / static_cast<double>(tokens))) < 1e-4 * r.ppl);
    po.max_windows = 2;
    QCOMPARE(perplexity(*model, paths, po).tokens, int64_t{32});
  }

  void taskSpecsParseOrSayWhy() {
    QCOMPARE(QString::fromStdString(eval_metric_key(parse_eval_task("hellaswag:/x/val.jsonl"), "acc")),
             QString("eval/hellaswag/acc"));
    QCOMPARE(QString::fromStdString(eval_metric_key(parse_eval_task(" ppl:data/my corpus.txt"), "ppl")),
             QString("eval/ppl/my_corpus/ppl"));
    QCOMPARE(parse_eval_tasks("ppl:default, hellaswag:a.jsonl,").size(), size_t{2});
    QVERIFY(test::error_of([] { parse_eval_task("bleu:x"); }).contains("unknown kind 'bleu'"));
    QVERIFY(test::error_of([] { parse_eval_task("hellaswag:"); }).contains("names no path"));
    QVERIFY(test::error_of([] { parse_eval_task("x.jsonl"); }).contains("has no kind"));
    Config c;
    c.eval.tasks = "hellaswag:/no/such.jsonl,ppl:a/x.txt,ppl:b/x.bin";
    const auto problems = eval_task_problems(c);
    QCOMPARE(problems.size(), size_t{2});
    QVERIFY(QString::fromStdString(problems[0]).contains("'/no/such.jsonl' does not exist"));
    QVERIFY(QString::fromStdString(problems[1]).contains("would both record eval/ppl/x/"));
    c.eval.tasks = "hellaswag:" + kTinyItems + ",ppl:default";
    QVERIFY(eval_task_problems(c).empty());
  }

  // A model whose answers are known: trained only on the items' contexts followed by their right endings,
  // it must find every right ending, by sum and by mean (the wrong endings hold words it never saw).
  void modelTrainedOnTheAnswersGetsThemAllRight() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    std::string text;
    const std::vector<std::string> answers = {
        "A woman fills a kettle with water. She puts the kettle on the stove and waits for it to boil.",
        "A boy climbs onto his bicycle at the top of the hill. He pushes off and rolls down the road.",
        "A man sprays soapy water over the roof of his car. Then he rinses the soap off with a hose.",
        "The baker kneads the dough on a floured table and shapes it into a round loaf for the oven.",
        "A girl clips a leash to her dog's collar. They walk together along the park path.",
        "An old man sits in an armchair by the fire and opens a book. He turns the pages slowly and reads for an "
        "hour."};
    for (int r = 0; r < 40; ++r)
      for (const std::string& a : answers) text += a + "\n";
    write_text(env.path("answers.txt"), text);
    Config c;
    apply_overrides(c, test::tiny_run_overrides({"data.path=" + env.path("answers.txt"), "train.steps=150",
                                                 "optimizer.lr=1e-2", "schedule.warmup_steps=10", "train.batch_size=8",
                                                 "speed.precision=fp32", "eval.every=0", "sample.every=-1",
                                                 "checkpoint.dir=" + env.path("ckpt"), "threads=1"}));
    test::RecordingSink r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QVERIFY(!r.checkpoints.empty());
    const CheckpointEvaluation e = evaluate_checkpoint(r.checkpoints.back().path, "hellaswag:" + kTinyItems, "cpu");
    QCOMPARE(e.step, int64_t{150});
    QCOMPARE(e.results.get("n"), 6.0);
    QCOMPARE(e.results.get("acc"), 1.0);
    QCOMPARE(e.results.get("acc_norm"), 1.0);
    QVERIFY(e.results.get("acc_low") > 0.5 && e.results.get("acc_high") == 1.0);  // Wilson for 6/6: [0.61, 1]
  }

  // eval.tasks: evaluated every eval_every steps as metrics of the run, which reach the store (its
  // metric keys, summary and exports) with no other edit.
  void trainingEvaluatesTasksAsRunMetrics() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string corpus = env.corpus_excerpt(20000), db = env.path("runs.db");
    Config c;
    apply_overrides(c, test::tiny_run_overrides({"data.path=" + corpus, "train.steps=6", "eval.every=3",
                                                 "train.batch_size=2", "sample.every=-1", "threads=1",
                                                 "eval.tasks=hellaswag:" + kTinyItems + ",ppl:" + corpus,
                                                 "checkpoint.dir=" + env.path("ckpt")}));
    test::RecordingSink r;
    int64_t run_id = 0;
    {
      StoreSink store(db);
      FanOutSink sinks;
      sinks.add(&r), sinks.add(&store);
      QCOMPARE(QString::fromStdString(train(c, sinks).status), QString("finished"));
      store.flush();
      run_id = store.run_id();
    }
    const std::string stem = std::filesystem::path(corpus).stem().string();
    std::vector<int64_t> steps;
    for (const EvalEvent& e : r.evals)
      if (e.metrics.has("eval/hellaswag/acc")) {
        steps.push_back(e.step);
        QCOMPARE(e.metric("eval/hellaswag/n"), 6.0);
        QVERIFY(e.metric("eval/hellaswag/acc_norm") >= 0 && e.metric("eval/hellaswag/acc_norm") <= 1);
        const double ppl = e.metric("eval/ppl/" + stem + "/ppl");
        QVERIFY2(std::abs(ppl - std::exp(e.metric("eval/ppl/" + stem + "/loss"))) < 1e-6 * ppl,
                 qPrintable(QString::number(ppl)));
      }
    QVERIFY(steps == (std::vector<int64_t>{3, 6}));
    RunStore store(db, RunStore::Mode::existing);
    int found = 0;
    for (const MetricRow& row : store.metrics(run_id))
      if (!std::isnan(row["eval/hellaswag/acc"]) && !std::isnan(row["eval/ppl/" + stem + "/ppl"])) ++found;
    QCOMPARE(found, 2);
    std::ostringstream csv;
    export_runs(store, {run_id}, ExportFormat::csv, csv);
    QVERIFY(csv.str().find(",eval/hellaswag/acc_norm,") != std::string::npos);
  }

  // A task that cannot run on this run's model is refused before step 1, not at the first evaluation.
  void trainingRefusesBadTasksBeforeStepOne_data() {
    QTest::addColumn<QString>("tasks");
    QTest::addColumn<QString>("context");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing file") << "hellaswag:/no/such.jsonl"
                                  << "32"
                                  << "HellaSwag file '/no/such.jsonl' does not exist";
    QTest::newRow("ending longer than the context") << QString::fromStdString("hellaswag:" + kTinyItems) << "8"
                                                    << "more than the model's context of 8";
    QTest::newRow("bad spec") << "hellaswag"
                              << "32"
                              << "has no kind";
  }
  void trainingRefusesBadTasksBeforeStepOne() {
    QFETCH(QString, tasks);
    QFETCH(QString, context);
    QFETCH(QString, expected);
    test::ScratchEnv env;
    QVERIFY(env.ok());
    Config c;
    apply_overrides(
        c, test::tiny_run_overrides({"data.path=" + env.corpus_excerpt(5000), "train.steps=2",
                                     "model.context=" + context.toStdString(), "eval.tasks=" + tasks.toStdString(),
                                     "checkpoint.dir=" + env.path("ckpt"), "threads=1"}));
    test::RecordingSink r;
    const QString err = test::error_of([&] { train(c, r); });
    QVERIFY2(err.contains(expected) && !err.contains('\n'), qPrintable(err));
    QVERIFY(r.checkpoints.empty() && r.end.status.empty());  // nothing ran
  }

  void cliRefusesBadTasksAndMissingFiles_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    const QString items = QString::fromStdString(kTinyItems);
    QTest::newRow("unknown kind") << QStringList{"--checkpoint", "/no/such.safetensors", "--task", "bleu:x"}
                                  << "unknown kind 'bleu'";
    QTest::newRow("no kind") << QStringList{"--checkpoint", "/no/such.safetensors", "--task", "x.jsonl"}
                             << "has no kind";
    // A file that exists stands for the checkpoint where the task must fail first (it is never loaded).
    QTest::newRow("missing items") << QStringList{"--checkpoint", items, "--task", "hellaswag:/no/such.jsonl"}
                                   << "cannot open '/no/such.jsonl'";
    QTest::newRow("missing checkpoint") << QStringList{"--checkpoint", "/no/such.safetensors", "--task",
                                                       "hellaswag:" + items}
                                        << "checkpoint '/no/such.safetensors' does not exist";
    QTest::newRow("missing ppl data") << QStringList{"--checkpoint", items, "--task", "ppl:/no/such/corpus.txt"}
                                      << "'/no/such/corpus.txt' does not exist";
  }
  void cliRefusesBadTasksAndMissingFiles() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    test::CliResult r = test::run_tokamak(QStringList{"eval", "--no-store"} + args);
    QCOMPARE(r.code, 1);
    const QString err = QString::fromUtf8(r.err).trimmed();
    QVERIFY2(!err.contains('\n') && err.startsWith("tokamak: "), qPrintable(err));
    QVERIFY2(err.contains(expected) && err.contains("hint:"), qPrintable(err));
  }

  // `tokamak eval` on a run's checkpoint: --json prints the results, and they become metrics of that run
  // at the checkpoint's step (runs compare and exports show them). The same weights as a Hugging Face folder
  // give the same accuracy, but belong to no run: printed only.
  void cliEvalRecordsAsMetricsOfTheRun() {
    QVERIFY2(QFile::exists(test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const QString db = QString::fromStdString(env.path("runs.db")), items = QString::fromStdString(kTinyItems);
    const QString corpus = QString::fromStdString(env.corpus_excerpt(5000));
    test::CliResult t = test::run_tokamak(QStringList{"train", "--json", "--db", db} +
                                          test::tiny_run_args({"train.batch_size=2", "train.steps=3", "sample.every=-1",
                                                               "checkpoint.dir=" + env.path("ckpt"), "threads=1"}));
    QVERIFY2(t.code == 0, t.err.constData());
    QString checkpoint;
    for (const nlohmann::json& e : t.json_lines())
      if (e.is_object() && e.value("event", "") == "checkpoint")
        checkpoint = QString::fromStdString(e.value("path", ""));
    QVERIFY(!checkpoint.isEmpty());

    test::CliResult h =
        test::run_tokamak({"eval", "--json", "--db", db, "--checkpoint", checkpoint, "--task", "hellaswag:" + items});
    QVERIFY2(h.code == 0, h.err.constData());
    QJsonObject hj = h.json();
    QCOMPARE(hj["n"].toInt(), 6);
    QCOMPARE(hj["step"].toInt(), 3);
    QVERIFY(hj["acc"].isDouble() && hj["acc_norm"].isDouble() && hj["recorded"].toBool());
    QVERIFY2(h.err.contains("recorded as eval/hellaswag/*"), h.err.constData());

    test::CliResult p = test::run_tokamak(
        {"eval", "--json", "--db", db, "--checkpoint", checkpoint, "--task", "ppl:" + corpus, "--limit", "3"});
    QVERIFY2(p.code == 0, p.err.constData());
    QJsonObject pj = p.json();
    QCOMPARE(pj["tokens"].toInt(), 3 * 32);  // three windows of the tiny run's context
    QVERIFY(std::abs(pj["ppl"].toDouble() - std::exp(pj["loss"].toDouble())) < 1e-9 * pj["ppl"].toDouble());

    {
      RunStore store(db.toStdString(), RunStore::Mode::existing);
      const std::vector<MetricRow> rows = store.metrics(store.run_ids().front());
      QCOMPARE(rows.back().step, int64_t{3});
      QCOMPARE(rows.back()["eval/hellaswag/acc"], hj["acc"].toDouble());
      QCOMPARE(rows.back()["eval/ppl/" + std::filesystem::path(corpus.toStdString()).stem().string() + "/ppl"],
               pj["ppl"].toDouble());
    }
    test::CliResult compare = test::run_tokamak({"runs", "compare", "1", "--db", db});
    QVERIFY2(compare.code == 0 && compare.out.contains("eval/hellaswag/acc_norm"), compare.out.constData());

    const QString hf = QString::fromStdString(env.path("hf"));
    test::CliResult x = test::run_tokamak({"export", "--checkpoint", checkpoint, "--format", "hf", "--out", hf});
    QVERIFY2(x.code == 0, x.err.constData());
    x = test::run_tokamak({"export", "--checkpoint", checkpoint, "--format", "hf", "--out", hf, "--force"});
    QVERIFY2(x.code == 0, x.err.constData());  // its model.safetensors is an export's, not a checkpoint
    test::CliResult f =
        test::run_tokamak({"eval", "--json", "--db", db, "--checkpoint", hf, "--task", "hellaswag:" + items});
    QVERIFY2(f.code == 0, f.err.constData());
    QVERIFY2(f.err.contains("belongs to no run"), f.err.constData());
    QJsonObject fj = f.json();
    QVERIFY(!fj["recorded"].toBool());
    QCOMPARE(fj["acc"].toDouble(), hj["acc"].toDouble());
    QCOMPARE(fj["acc_norm"].toDouble(), hj["acc_norm"].toDouble());
  }
};

QTEST_GUILESS_MAIN(TestEval)
#include "test_eval.moc"
