// Data parallelism on CPU with Gloo, ranks as real `tokamak train --gpus N` processes on loopback:
// W ranks with batch B train to the parameters of one process with batch W·B (with and without gradient
// accumulation), a killed or hung rank ends the others with an error within dist.timeout_s, and Ctrl-C
// stops every rank at the same step. ZeRO-1 (dist.zero=1) gives the same losses and weights, its checkpoint is
// the ordinary file and resumes at world 1 and 3. Also: the launcher's environment, the reducer's buckets and
// their timings relative to backward's end. Each rank's GPU choice, pure logic, is test_rank_device's (unit).
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QtTest>

#include <cmath>

#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <map>
#include <thread>

#include "engine/base/config/config.h"
#include "engine/base/data/dataset.h"
#include "engine/base/run/layer_metrics.h"
#include "engine/torch/parallel/dist_env.h"
#include "engine/torch/parallel/reducer.h"
#include "engine/torch/model/gpt.h"
#include "engine/base/store/run_store.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/trainer.h"
#include "engine/base/util/error.h"
#include "engine/base/util/safetensors.h"
#include "tests/support/big_batch.h"
#include "tests/support/cli_runner.h"
#include "tests/support/dist_ranks.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using tokamak::test::one_big_batch;
using tokamak::test::Reference;
using tokamak::test::weights;

namespace {

std::vector<std::string> tiny_sets(const std::string& data) { return test::dist_tiny_sets(data); }

std::map<std::string, at::Tensor> checkpoint_weights(const Config& c, const std::string& path) {
  GPT m(GPTOptions::from_config(c.model, c.speed));
  load_checkpoint(path, *m, nullptr, false, c10::kCPU);
  return weights(*m);
}

// The "step" events of a --json run, as {"loss": [...], "grad_norm": [...]}.
std::map<QString, std::vector<double>> reported_steps(const QString& json_lines) {
  std::map<QString, std::vector<double>> out;
  for (const QString& line : json_lines.split('\n', Qt::SkipEmptyParts)) {
    QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
    if (o.value("event").toString() != "step") continue;
    out["loss"].push_back(o.value("loss").toDouble());
    out["grad_norm"].push_back(o.value("grad_norm").toDouble());
    out["phase_allreduce_ms"].push_back(o.value("phase_allreduce_ms").toDouble(-1));  // -1: not reported
    out["zero_saved_bytes"].push_back(o.value("zero_saved_bytes").toDouble(-1));
    out["allreduce_first_start_ms"].push_back(o.value("allreduce_first_start_ms").toDouble(1e9));
    for (auto it = o.begin(); it != o.end(); ++it)  // per-layer statistics, rank 0's: "layers.g_rms.h0.attn"...
      if (it.key().startsWith("layers.g_rms.")) out[it.key()].push_back(it.value().toDouble());
  }
  return out;
}

double max_difference(const std::map<std::string, at::Tensor>& a, const std::map<std::string, at::Tensor>& b,
                      std::string* where) {
  double worst = 0;
  for (const auto& [name, t] : a) {
    double d = (t - b.at(name)).abs().max().item<double>();
    if (d > worst) worst = d, *where = name;
  }
  return worst;
}

// Starts `tokamak train` with the arguments; the caller reads and waits.
std::unique_ptr<QProcess> start_tokamak(const QStringList& args) {
  auto p = std::make_unique<QProcess>();
  p->start(test::tokamak_bin(), QStringList{"train"} + args);
  return p;
}

// Reads a process's output until `pattern` appears in it (or the time runs out); returns all read so far.
QString read_until(QProcess& p, QProcess::ProcessChannel channel, const QString& pattern, int ms, QString* other) {
  QString out;
  QElapsedTimer t;
  t.start();
  while (!out.contains(pattern) && t.elapsed() < ms && p.state() != QProcess::NotRunning) {
    p.waitForReadyRead(100);
    out +=
        QString::fromUtf8(channel == QProcess::StandardOutput ? p.readAllStandardOutput() : p.readAllStandardError());
    *other +=
        QString::fromUtf8(channel == QProcess::StandardOutput ? p.readAllStandardError() : p.readAllStandardOutput());
  }
  return out;
}

std::vector<pid_t> worker_pids(const QString& stderr_text) {
  QRegularExpression re("started \\d+ ranks, pids ([0-9 ]+) \\(");
  auto m = re.match(stderr_text);
  std::vector<pid_t> pids;
  if (m.hasMatch())
    for (const QString& s : m.captured(1).split(' ', Qt::SkipEmptyParts)) pids.push_back(s.toInt());
  return pids;
}

// Every tensor of a checkpoint by name (model, optimizer, rng), read through its header.
std::map<std::string, at::Tensor> checkpoint_tensors(const std::string& path) {
  SafetensorsHeader h = read_safetensors_header(path);
  std::map<std::string, at::Tensor> out;
  for (const SafetensorsTensor& t : h.tensors) {
    if (t.dtype != "F32") continue;  // the RNG states are bytes
    at::Tensor x = at::empty(t.shape, at::kFloat);
    read_safetensors_bytes(path, h, t, x.data_ptr());
    out[t.name] = x;
  }
  return out;
}

void compare_losses(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  QVERIFY2(got.size() == want.size(),
           qPrintable(QString("%1: %2 vs %3 steps").arg(what).arg(got.size()).arg(want.size())));
  for (size_t i = 0; i < want.size(); ++i)
    QVERIFY2(std::abs(got[i] - want[i]) < 1e-5 * want[i],
             qPrintable(QString("%1, step %2: loss %3 vs %4").arg(what).arg(i + 1).arg(got[i]).arg(want[i])));
}

}  // namespace

class TestDist : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::string data_;

 private Q_SLOTS:
  void initTestCase() {
    test::disable_flight_recorder();  // before any process group: ranks as threads (dist_ranks.h)
    at::set_num_threads(1);
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY2(env_->ok(), "assets missing: run scripts/setup.sh");
    QVERIFY2(!test::tokamak_bin().isEmpty(), "TOKAMAK_TOKAMAK_BIN is not set (run through ctest)");
    data_ = env_->corpus_excerpt(120000);
    prepare_dataset(data_);  // tokenized once into the scratch cache that every worker process shares
  }

  void environmentOfLaunchers() {
    auto from = [](std::map<std::string, std::string> vars) {
      return dist_env_from_environment([vars](const char* name) -> const char* {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      });
    };
    QCOMPARE(from({}).world_size, 1);
    // A batch script sees SLURM_PROCID/SLURM_NTASKS outside srun: still one process.
    QCOMPARE(from({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}}).world_size, 1);
    DistEnv t = from({{"RANK", "9"},
                      {"WORLD_SIZE", "16"},
                      {"LOCAL_RANK", "1"},
                      {"LOCAL_WORLD_SIZE", "8"},
                      {"MASTER_ADDR", "node1"},
                      {"MASTER_PORT", "29400"},
                      {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
    QCOMPARE(t.rank, 9);
    QCOMPARE(t.world_size, 16);
    QCOMPARE(t.local_rank, 1);
    QCOMPARE(t.local_world_size, 8);
    QCOMPARE(QString::fromStdString(t.master_addr), QString("node1"));
    QCOMPARE(t.master_port, 29400);
    QVERIFY(t.store_hosted);
    QCOMPARE(QString::fromStdString(t.source), QString("torchrun"));
    DistEnv s = from({{"SLURM_PROCID", "5"},
                      {"SLURM_STEP_NUM_TASKS", "8"},
                      {"SLURM_LOCALID", "1"},
                      {"SLURM_STEP_NUM_NODES", "2"},
                      {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
                      {"MASTER_ADDR", "n1"}});
    QCOMPARE(s.rank, 5);
    QCOMPARE(s.world_size, 8);
    QCOMPARE(s.local_rank, 1);
    QCOMPARE(s.local_world_size, 4);
    QVERIFY(!s.store_hosted);
    QCOMPARE(QString::fromStdString(s.source), QString("slurm"));
    // Several nodes need a master address; ranks outside the world are refused.
    QVERIFY_THROWS_EXCEPTION(
        Error, from({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_STEP_NUM_NODES", "2"}}));
    QVERIFY_THROWS_EXCEPTION(Error, from({{"RANK", "2"}, {"WORLD_SIZE", "2"}}));
  }

  void inProcessRanksEqualOneProcess_data() {
    QTest::addColumn<int>("world");
    QTest::addColumn<bool>("zero");
    QTest::newRow("2 ranks") << 2 << false;
    QTest::newRow("2 ranks, ZeRO-1") << 2 << true;
    QTest::newRow("3 ranks, ZeRO-1") << 3 << true;
  }
  void inProcessRanksEqualOneProcess() {
    // tests/support/dist_ranks: what test_gpu runs on CUDA ranks, here on Gloo CPU ranks (threads). A 65-token
    // vocabulary makes the parameter count indivisible by 3, so the 3-rank shards need padding.
    QFETCH(int, world);
    QFETCH(bool, zero);
    const ModelConfig m = test::tiny_model(65);
    QVERIFY(GPT(GPTOptions::from_config(m, SpeedConfig{}))->num_parameters() % 3 != 0);
    const auto batch = [&](int64_t step, int rank) { return test::random_batch(m.vocab_size, step, rank); };
    test::RanksOptions o;
    o.world = world, o.zero = zero, o.steps = 4;
    const test::RanksResult got = test::train_ranks(m, o, batch);
    QVERIFY2(got.error.empty(), got.error.c_str());
    const test::RanksResult want = test::train_one(m, world, o.steps, c10::kCPU, batch);
    for (size_t i = 0; i < want.losses.size(); ++i) {
      QVERIFY2(std::abs(got.losses[i] - want.losses[i]) < 1e-5 * want.losses[i], qPrintable(QString::number(i)));
      QVERIFY2(std::abs(got.grad_norms[i] - want.grad_norms[i]) < 1e-4 * want.grad_norms[i],
               qPrintable(QString("step %1 norm %2 vs %3").arg(i).arg(got.grad_norms[i]).arg(want.grad_norms[i])));
    }
    std::string where;
    const double diff = test::largest_difference(want.weights, got.weights, &where);
    QVERIFY2(diff < 1e-5, qPrintable(QString("%1 at %2").arg(diff).arg(QString::fromStdString(where))));
  }

  void singleProcessApiRefusesSeveralRanks() {
    Config c;
    apply_overrides(c, tiny_sets(data_));
    c.dist.gpus = 2;
    EventSink none;
    try {
      train(c, none);
      QFAIL("train() ran dist.gpus=2 in one process");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("--gpus 2"), e.what());
    }
  }

  void reducerBucketsInReverseOrderAndStartsDuringBackward() {
    // A group of one (Gloo, in this process): the reducer's bucketing and hooks with nothing to exchange.
    DistEnv e;
    e.master_port = test::free_port();
    ProcessGroup group(e, c10::kCPU, std::chrono::seconds(10));
    Config c;
    apply_overrides(c, tiny_sets(data_));
    at::manual_seed(3);
    GPT model(GPTOptions::from_config(c.model, c.speed));
    auto params = model->parameters();
    auto tokens = at::randint(c.model.vocab_size, {4, 17}, at::kLong);
    Batch batch{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
    auto plain = [&] {
      for (auto& p : params) p.mutable_grad() = at::Tensor();
      forward_backward(
          *model, [&](int64_t) { return batch; }, 2, Precision::kFp32, c10::kCPU);
      std::vector<at::Tensor> g;
      for (auto& p : params) g.push_back(p.grad().clone());
      return g;
    };
    std::vector<at::Tensor> expected = plain();

    GradReducer reducer(params, group, /*bucket_bytes=*/4096);
    auto layout = reducer.bucket_layout();
    QVERIFY2(layout.size() > 2, qPrintable(QString::number(layout.size())));
    size_t previous = params.size();
    for (const auto& bucket : layout)
      for (size_t i : bucket) {
        QVERIFY(i < previous);
        previous = i;
      }  // reverse parameter order throughout
    reducer.zero_grad();
    forward_backward(
        *model, [&](int64_t) { return batch; }, 2, Precision::kFp32, c10::kCPU, {}, &reducer);
    QCOMPARE(reducer.started_in_backward(), reducer.bucket_count());  // none waited for the end of backward
    for (size_t i = 0; i < params.size(); ++i)
      QVERIFY2(at::allclose(params[i].grad(), expected[i], 1e-5, 1e-7), qPrintable(QString::number(i)));
  }

  void reducerAveragesTwoRanks() {
    // Two Gloo ranks in this process (a thread each), each with its own batch: after backward both hold the
    // mean of the two ranks' gradients — what a group of one cannot show.
    Config c;
    apply_overrides(c, tiny_sets(data_));
    at::manual_seed(5);
    GPT reference(GPTOptions::from_config(c.model, c.speed));
    std::vector<Batch> batches;
    for (int r = 0; r < 2; ++r) {
      auto tokens = at::randint(c.model.vocab_size, {4, 17}, at::kLong);
      batches.push_back({tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()});
    }
    auto gradients_of = [&](GPTImpl& model, const Batch& b, GradReducer* reducer) {
      forward_backward(
          model, [&](int64_t) { return b; }, 1, Precision::kFp32, c10::kCPU, {}, reducer);
      std::vector<at::Tensor> g;
      for (auto& p : model.parameters()) g.push_back(p.grad().clone());
      return g;
    };
    auto clear = [](GPTImpl& model) {
      for (auto& p : model.parameters()) p.mutable_grad() = at::Tensor();
    };
    std::vector<at::Tensor> expected = gradients_of(*reference, batches[0], nullptr);
    clear(*reference);
    std::vector<at::Tensor> second = gradients_of(*reference, batches[1], nullptr);
    QVERIFY2(!at::allclose(expected[0], second[0]),
             "the two batches give the same gradient: the test would prove nothing");
    for (size_t i = 0; i < expected.size(); ++i) expected[i] = (expected[i] + second[i]) / 2;

    const int port = test::free_port();
    std::vector<std::vector<at::Tensor>> got(2);
    std::vector<std::string> errors(2);
    auto rank_main = [&](int rank) {
      try {
        DistEnv e;
        e.rank = rank, e.world_size = 2, e.local_rank = rank, e.local_world_size = 2, e.master_port = port;
        ProcessGroup group(e, c10::kCPU, std::chrono::seconds(20));
        GPT model(GPTOptions::from_config(c.model, c.speed));
        {
          torch::NoGradGuard no_grad;
          auto mine = model->parameters(), ref = reference->parameters();
          for (size_t i = 0; i < mine.size(); ++i) mine[i].copy_(ref[i]);
        }
        GradReducer reducer(model->parameters(), group, /*bucket_bytes=*/4096);
        reducer.zero_grad();
        got[rank] = gradients_of(*model, batches[rank], &reducer);
      } catch (const std::exception& ex) {
        errors[rank] = ex.what();
      }
    };
    std::thread r1(rank_main, 1);
    rank_main(0);
    r1.join();
    QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
    for (int rank = 0; rank < 2; ++rank)
      for (size_t i = 0; i < expected.size(); ++i)
        QVERIFY2(at::allclose(got[rank][i], expected[i], 1e-5, 1e-7),
                 qPrintable(QString("rank %1, parameter %2: not the mean gradient").arg(rank).arg(i)));
  }

  void bucketsStartBeforeBackwardEnds() {
    // Two Gloo ranks (threads) and a model with several buckets: on a timed step every bucket's start and end
    // are recorded relative to the end of backward, and the first bucket's all-reduce started before it ended
    // (the hooks launched it while backward went on). An untimed step records nothing.
    Config c;
    apply_overrides(c, tiny_sets(data_));
    apply_overrides(c, {"model.n_layer=4"});
    at::manual_seed(9);
    GPT reference(GPTOptions::from_config(c.model, c.speed));
    auto tokens = at::randint(c.model.vocab_size, {4, 17}, at::kLong);
    Batch batch{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
    const int port = test::free_port();
    std::vector<std::vector<BucketTiming>> timed(2), untimed(2);
    std::vector<size_t> buckets(2);
    std::vector<std::string> errors(2);
    auto rank_main = [&](int rank) {
      try {
        DistEnv e;
        e.rank = rank, e.world_size = 2, e.local_rank = rank, e.local_world_size = 2, e.master_port = port;
        ProcessGroup group(e, c10::kCPU, std::chrono::seconds(20));
        GPT model(GPTOptions::from_config(c.model, c.speed));
        GradReducer reducer(model->parameters(), group, /*bucket_bytes=*/16384);
        buckets[rank] = reducer.bucket_count();
        for (bool timing : {true, false}) {
          reducer.zero_grad();
          reducer.prepare(/*last=*/true, timing);
          model->forward(batch.inputs, batch.targets).loss.backward();
          reducer.finish();
          (timing ? timed : untimed)[rank] = reducer.timings();
        }
      } catch (const std::exception& ex) {
        errors[rank] = ex.what();
      }
    };
    std::thread r1(rank_main, 1);
    rank_main(0);
    r1.join();
    QVERIFY2(errors[0].empty() && errors[1].empty(), (errors[0] + " | " + errors[1]).c_str());
    for (int rank = 0; rank < 2; ++rank) {
      QVERIFY2(buckets[rank] >= 4, qPrintable(QString::number(buckets[rank])));
      QCOMPARE(timed[rank].size(), buckets[rank]);
      QVERIFY(untimed[rank].empty());
      for (const BucketTiming& t : timed[rank]) QVERIFY2(t.end_ms >= t.start_ms, qPrintable(QString::number(t.end_ms)));
      QVERIFY2(timed[rank].front().start_ms < 0,
               qPrintable(QString("rank %1: first bucket started %2 ms after backward")
                              .arg(rank)
                              .arg(timed[rank].front().start_ms)));
      const Overlap o = overlap_of(timed[rank]);
      qInfo("rank %d, %zu buckets: first start %.3f ms, last end %.3f ms (relative to backward's end), hidden %.2f",
            rank, timed[rank].size(), o.first_start_ms, o.last_end_ms, o.hidden);
    }
  }

  void oneRankReferenceIsTheTrainer() {
    // Anchors the reference loop below: with W=1 it must be what train() computes.
    Config c;
    apply_overrides(c, tiny_sets(data_));
    apply_overrides(c, {"train.steps=4", "checkpoint.dir=" + env_->path("ckpt-ref")});
    EventSink none;
    QCOMPARE(QString::fromStdString(train(c, none).status), QString("finished"));
    std::string where;
    double diff = max_difference(one_big_batch(c, 1).weights,
                                 checkpoint_weights(c, checkpoint_path(env_->path("ckpt-ref"), 4)), &where);
    QVERIFY2(diff == 0, qPrintable(QString("%1 at %2").arg(diff).arg(QString::fromStdString(where))));
  }

  void ranksEqualOneBigBatch_data() {
    QTest::addColumn<int>("world");
    QTest::addColumn<int>("accum");
    QTest::addColumn<int>("zero");
    QTest::addColumn<QString>("optimizer");
    QTest::newRow("2 ranks") << 2 << 1 << 0 << "adamw";
    QTest::newRow("3 ranks") << 3 << 1 << 0 << "adamw";
    QTest::newRow("2 ranks, 2 micro-steps") << 2 << 2 << 0 << "adamw";
    // ZeRO-1: reduce-scattered gradients, AdamW on each rank's shard, all-gathered weights — the same losses.
    QTest::newRow("2 ranks, ZeRO-1") << 2 << 1 << 1 << "adamw";
    QTest::newRow("3 ranks, ZeRO-1") << 3 << 1 << 1 << "adamw";
    QTest::newRow("3 ranks, ZeRO-1, 2 micro-steps") << 3 << 2 << 1 << "adamw";
    // Muon: every rank orthogonalizes the same all-reduced gradient, so the ranks stay identical and equal
    // one process stepping the big batch (Muon under data parallel).
    QTest::newRow("2 ranks, Muon") << 2 << 1 << 0 << "muon";
    QTest::newRow("3 ranks, Muon, 2 micro-steps") << 3 << 2 << 0 << "muon";
  }
  void ranksEqualOneBigBatch() {
    QFETCH(int, world);
    QFETCH(int, accum);
    QFETCH(int, zero);
    QFETCH(QString, optimizer);
    const std::string dir = env_->path("ckpt-" + std::to_string(world) + "x" + std::to_string(accum) + "z" +
                                       std::to_string(zero) + optimizer.toStdString());
    std::vector<std::string> sets = tiny_sets(data_);
    sets.insert(sets.end(), {"train.steps=5", "train.grad_accum=" + std::to_string(accum), "checkpoint.dir=" + dir,
                             "dist.bucket_mb=0.02",  // several buckets, tiny model
                             "dist.zero=" + std::to_string(zero), "optimizer.name=" + optimizer.toStdString()});
    auto p =
        start_tokamak(QStringList{"--gpus", QString::number(world), "--no-store", "--json"} + test::set_args(sets));
    QVERIFY(p->waitForFinished(120000));
    const QString err = QString::fromUtf8(p->readAllStandardError());
    QVERIFY2(p->exitStatus() == QProcess::NormalExit && p->exitCode() == 0, qPrintable(err));
    const QString out = QString::fromUtf8(p->readAllStandardOutput());
    QCOMPARE(out.count("\"event\":\"start\""), 1);  // only rank 0 reports
    QVERIFY2(out.contains(QString("\"world_size\":%1").arg(world)), qPrintable(out));
    QVERIFY2(out.contains("\"status\":\"finished\""), qPrintable(out));

    Config c;
    apply_overrides(c, sets);
    if (zero && world == 3) {  // the shards need padding: the case an even split would never exercise
      GPT m(GPTOptions::from_config(c.model, c.speed));
      QVERIFY2(m->num_parameters() % 3 != 0, qPrintable(QString::number(m->num_parameters())));
    }
    Reference ref = one_big_batch(c, world);
    // Every step's loss (the mean over ranks) and gradient norm (of the averaged gradient: a sum instead of
    // a mean would double it) equal the big batch's, to float rounding of sums taken in another order.
    auto reported = reported_steps(out);
    QCOMPARE(reported["loss"].size(), ref.loss.size());
    for (size_t i = 0; i < ref.loss.size(); ++i) {
      QVERIFY2(std::abs(reported["loss"][i] - ref.loss[i]) < 1e-5 * ref.loss[i],
               qPrintable(QString("step %1 loss %2 vs %3").arg(i + 1).arg(reported["loss"][i]).arg(ref.loss[i])));
      QVERIFY2(
          std::abs(reported["grad_norm"][i] - ref.grad_norm[i]) < 1e-4 * ref.grad_norm[i],
          qPrintable(QString("step %1 norm %2 vs %3").arg(i + 1).arg(reported["grad_norm"][i]).arg(ref.grad_norm[i])));
    }
    // Rank 0's per-layer gradient RMS is of the averaged gradient: the groups' squares add up to the reported norm's
    // after the clip (ZeRO-1 leaves rank 0 its own slices: its view is its own, as docs/INSIDE.md says).
    if (!zero) {
      GPT m(GPTOptions::from_config(c.model, c.speed));
      std::map<std::string, double> numel;
      for (const auto& p : m->named_parameters()) numel[parameter_group(p.key())] += double(p.value().numel());
      for (const auto& [group, n] : numel)
        QVERIFY2(reported["layers.g_rms." + QString::fromStdString(group)].size() == ref.loss.size(), group.c_str());
      for (size_t i = 0; i < ref.loss.size(); ++i) {
        double sum = 0;
        for (const auto& [group, n] : numel)
          sum += n * std::pow(reported["layers.g_rms." + QString::fromStdString(group)][i], 2);
        const double clip = c.optimizer.grad_clip > 0 ? c.optimizer.grad_clip : 1e30;
        const double clipped = std::min(reported["grad_norm"][i], clip);
        QVERIFY2(std::abs(std::sqrt(sum) - clipped) < 1e-3 * clipped,
                 qPrintable(QString("step %1: groups %2 against the clipped norm %3")
                                .arg(i + 1)
                                .arg(std::sqrt(sum))
                                .arg(clipped)));
      }
    }
    // The step profile of a data-parallel step has an all-reduce phase: at least the loss's, never hidden.
    for (double ms : reported["phase_allreduce_ms"]) QVERIFY2(ms > 0, qPrintable(QString("all-reduce %1 ms").arg(ms)));
    // Every (profiled) report step's first bucket started during backward, sharded or not.
    for (double ms : reported["allreduce_first_start_ms"])
      QVERIFY2(ms < 0, qPrintable(QString("first start %1 ms").arg(ms)));
    // A sharded run holds (N-1)/N less AdamW state per rank (up to the padding); an unsharded one reports none.
    for (double saved : reported["zero_saved_bytes"]) {
      GPT m(GPTOptions::from_config(c.model, c.speed));
      const double full = 8.0 * static_cast<double>(m->num_parameters());  // exp_avg + exp_avg_sq, fp32
      if (zero)
        QVERIFY2(std::abs(saved - full * (world - 1) / world) < 0.01 * full, qPrintable(QString::number(saved)));
      else QCOMPARE(saved, -1.0);
    }
    std::string where;
    double diff = max_difference(ref.weights, checkpoint_weights(c, checkpoint_path(dir, 5)), &where);
    // Stated tolerance for the weights: 1e-4, about 1% of how far 5 steps move a weight (lr ≤ 2e-3 per step).
    // AdamW divides each gradient by its own running size, so where a gradient is near zero (rows of the
    // tied embedding for tokens that never occur) float rounding of the gradient moves the update by a
    // visible fraction of a step; elsewhere the weights agree to ~1e-6.
    QVERIFY2(diff < 1e-4, qPrintable(QString("%1 at %2").arg(diff).arg(QString::fromStdString(where))));
    qInfo("world %d, accum %d, zero %d: max |parameter difference| = %.3g (at %s)", world, accum, zero, diff,
          where.c_str());
  }

  // fp16 under data parallel: every rank unscales the same all-reduced gradients, so every rank finds the same
  // overflow and skips the same steps (a rank that stepped alone would train other weights, and its next all-reduce
  // would mix them). Two Gloo ranks from a start scale far too big: the run finishes, the scale is halved once per
  // overflow, and none of them is a fault.
  void fp16UnderDataParallel_data() {
    QTest::addColumn<int>("zero");
    QTest::newRow("all-reduced gradients") << 0;
    QTest::newRow("ZeRO-1: each rank checks its slices, found_inf all-reduced") << 1;
  }
  void fp16UnderDataParallel() {
    QFETCH(int, zero);
    std::vector<std::string> sets = tiny_sets(data_);
    sets.insert(sets.end(), {"train.steps=12", "speed.precision=fp16", "speed.loss_scale_init=1099511627776",
                             "train.max_skipped_steps=1", "train.log_every=1", "dist.zero=" + std::to_string(zero)});
    auto p = start_tokamak(QStringList{"--gpus", "2", "--no-store", "--json"} + test::set_args(sets));
    QVERIFY(p->waitForFinished(180000));
    const QString err = QString::fromUtf8(p->readAllStandardError());
    QVERIFY2(p->exitStatus() == QProcess::NormalExit && p->exitCode() == 0, qPrintable(err));
    const QString out = QString::fromUtf8(p->readAllStandardOutput());
    QVERIFY2(out.contains("\"status\":\"finished\"") && out.contains("\"world_size\":2"), qPrintable(out));
    double scale = 0, skipped = 0, faults = 0;
    int reports = 0;
    for (const QString& line : out.split('\n', Qt::SkipEmptyParts)) {
      const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
      if (o.value("event").toString() != "step") continue;
      ++reports;
      scale = o.value("loss_scale").toDouble(), skipped = o.value("scale_skipped_steps").toDouble();
      faults = o.value("skipped_steps").toDouble(-1);
    }
    QCOMPARE(reports, 12);
    QVERIFY2(skipped >= 5, qPrintable(QString::number(skipped)));  // 2^40 overflows the tiny model's fp16 gradients
    QCOMPARE(scale, std::ldexp(1.0, 40 - static_cast<int>(skipped)));
    QCOMPARE(faults, 0.0);
  }

  void zeroCheckpointIsOrdinaryAndResumesAtAnyWorldSize() {
    // The same 6-step run at world 2, sharded and not, each with a checkpoint at step 3.
    auto run = [&](const QStringList& gpus, const std::vector<std::string>& more) {
      std::vector<std::string> sets = tiny_sets(data_);
      sets.insert(sets.end(), {"train.steps=6", "checkpoint.every=3", "dist.bucket_mb=0.02"});
      sets.insert(sets.end(), more.begin(), more.end());
      auto p = start_tokamak(gpus + QStringList{"--no-store", "--json"} + test::set_args(sets));
      if (!p->waitForFinished(120000) || p->exitCode() != 0)
        return std::map<QString, std::vector<double>>{{"failed", {}}};
      auto steps = reported_steps(QString::fromUtf8(p->readAllStandardOutput()));
      return steps;
    };
    const std::string sharded = env_->path("ckpt-zero-w2"), plain = env_->path("ckpt-plain-w2");
    QVERIFY(!run({"--gpus", "2"}, {"dist.zero=1", "checkpoint.dir=" + sharded}).count("failed"));
    QVERIFY(!run({"--gpus", "2"}, {"dist.zero=0", "checkpoint.dir=" + plain}).count("failed"));

    // The sharded run's checkpoint is the ordinary file: the same names and shapes, AdamW's state full-size,
    // equal to the unsharded run's to float rounding (stated tolerance 1e-4, as for the weights above).
    const auto a = checkpoint_tensors(checkpoint_path(sharded, 3)), b = checkpoint_tensors(checkpoint_path(plain, 3));
    QCOMPARE(a.size(), b.size());
    int optimizer_tensors = 0;
    for (const auto& [name, t] : b) {
      QVERIFY2(a.count(name), name.c_str());
      QVERIFY2(a.at(name).sizes() == t.sizes(), name.c_str());
      const double d = (a.at(name) - t).abs().max().item<double>();
      QVERIFY2(d < 1e-4, qPrintable(QString("%1 differs by %2").arg(QString::fromStdString(name)).arg(d)));
      optimizer_tensors += name.rfind("optimizer.", 0) == 0;
      if (name.rfind("optimizer.steps.", 0) == 0) QCOMPARE(t.item<float>(), 3.0f);
    }
    QVERIFY(optimizer_tensors > 0);
    QVERIFY2(a.at("optimizer.exp_avg_sq.wte.weight").abs().sum().item<double>() > 0, "gathered state is zero");

    // Resumed at world 1 (an unsharded single process) from either checkpoint: the same continuation.
    auto resume_here = [&](const std::string& from, const std::string& dir) {
      Config c;
      apply_overrides(c, tiny_sets(data_));
      apply_overrides(c, {"train.steps=6", "checkpoint.every=3", "dist.zero=1", "checkpoint.resume=" + from,
                          "checkpoint.dir=" + dir});
      test::RecordingSink sink;
      EndEvent end = train(c, sink);
      return end.status == "finished" ? sink.losses() : std::vector<double>{};
    };
    const auto from_sharded = resume_here(checkpoint_path(sharded, 3), env_->path("ckpt-zero-w1"));
    const auto from_plain = resume_here(checkpoint_path(plain, 3), env_->path("ckpt-plain-w1"));
    QCOMPARE(from_plain.size(), size_t(3));
    compare_losses(from_sharded, from_plain, "world 1 from the sharded checkpoint");

    // Resumed at world 3, sharded (each rank keeps its third of the state) and not: the same continuation.
    auto z3 = run({"--gpus", "3"}, {"dist.zero=1", "checkpoint.resume=" + checkpoint_path(sharded, 3),
                                    "checkpoint.dir=" + env_->path("ckpt-zero-w3")});
    auto p3 = run({"--gpus", "3"}, {"dist.zero=0", "checkpoint.resume=" + checkpoint_path(plain, 3),
                                    "checkpoint.dir=" + env_->path("ckpt-plain-w3")});
    QVERIFY(!z3.count("failed") && !p3.count("failed"));
    QCOMPARE(p3["loss"].size(), size_t(3));
    compare_losses(z3["loss"], p3["loss"], "world 3, sharded, from the sharded checkpoint");
  }

  void killedRankEndsTheOthers_data() {
    QTest::addColumn<int>("zero");
    QTest::newRow("DDP") << 0;
    QTest::newRow("ZeRO-1") << 1;
  }
  void killedRankEndsTheOthers() {
    QFETCH(int, zero);
    const std::string dir = env_->path("ckpt-kill" + std::to_string(zero)),
                      db = env_->path("kill" + std::to_string(zero) + ".db");
    std::vector<std::string> sets = tiny_sets(data_);
    sets.insert(sets.end(), {"train.steps=100000", "checkpoint.dir=" + dir, "dist.timeout_s=5",
                             "dist.zero=" + std::to_string(zero)});
    auto p =
        start_tokamak(QStringList{"--gpus", "3", "--json", "--db", QString::fromStdString(db)} + test::set_args(sets));
    QString err;
    QString out = read_until(*p, QProcess::StandardOutput, "\"event\":\"step\"", 60000, &err);
    QVERIFY2(out.contains("\"event\":\"step\""), qPrintable(err));
    std::vector<pid_t> pids = worker_pids(err);
    QCOMPARE(static_cast<int>(pids.size()), 3);
    QElapsedTimer t;
    t.start();
    ::kill(pids[2], SIGKILL);
    QVERIFY(p->waitForFinished(60000));
    const double seconds = t.elapsed() / 1000.0;
    err += QString::fromUtf8(p->readAllStandardError());
    out += QString::fromUtf8(p->readAllStandardOutput());
    QVERIFY(p->exitCode() != 0);
    QVERIFY2(err.contains("rank 2") && err.contains("signal 9"), qPrintable(err));
    QVERIFY2(out.contains("\"status\":\"failed\""), qPrintable(out));
    // How long the launcher took is printed below, never asserted: a busy machine is slower.
    // Rank 0 recorded the failure.
    RunStore store(db, RunStore::Mode::existing);
    auto runs = store.list_runs();
    QCOMPARE(static_cast<int>(runs.size()), 1);
    RunInfo run = store.run(runs.front().run.id);
    QCOMPARE(QString::fromStdString(run.status), QString("failed"));
    QCOMPARE(run.world_size, 3);
    // Rank 0 keeps a checkpoint of its last step; ZeRO-1 cannot gather the state without the dead rank, so
    // it writes none rather than a partial one (its periodic checkpoints stand).
    const QStringList files = QDir(QString::fromStdString(dir)).entryList(QDir::Files);
    if (zero) QVERIFY2(files.isEmpty(), qPrintable(files.join(' ')));
    else QVERIFY2(!QDir(QString::fromStdString(dir)).entryList({"step_*"}).isEmpty(), qPrintable(err));
    qInfo("killed rank 2 (zero=%d): the launcher returned after %.1f s", zero, seconds);
  }

  void hungRankTimesOut() {
    std::vector<std::string> sets = tiny_sets(data_);
    // 10 s: long enough that two ranks starting on a loaded machine (each loads LibTorch and measures its GEMM rate)
    // meet at the first collective, short enough that the hang below ends the run quickly.
    sets.insert(sets.end(), {"train.steps=100000", "checkpoint.dir=" + env_->path("ckpt-hang"), "dist.timeout_s=10"});
    auto p = start_tokamak(QStringList{"--gpus", "2", "--json", "--no-store"} + test::set_args(sets));
    QString err;
    QString out = read_until(*p, QProcess::StandardOutput, "\"event\":\"step\"", 120000, &err);
    QVERIFY2(out.contains("\"event\":\"step\""), qPrintable(err));
    std::vector<pid_t> pids = worker_pids(err);
    QCOMPARE(static_cast<int>(pids.size()), 2);
    QElapsedTimer t;
    t.start();
    ::kill(pids[1], SIGSTOP);  // alive but silent: only the timeout can tell
    QVERIFY(p->waitForFinished(60000));
    const double seconds = t.elapsed() / 1000.0;
    err += QString::fromUtf8(p->readAllStandardError());
    QVERIFY(p->exitCode() != 0);
    QVERIFY2(err.contains("timed out", Qt::CaseInsensitive) || err.contains("timeout", Qt::CaseInsensitive),
             qPrintable(err));
    qInfo("hung rank 1: the launcher returned after %.1f s", seconds);
  }

  void interruptStopsEveryRankTogether() {
    const std::string dir = env_->path("ckpt-int");
    std::vector<std::string> sets = tiny_sets(data_);
    sets.insert(sets.end(), {"train.steps=100000", "checkpoint.dir=" + dir});
    auto p = start_tokamak(QStringList{"--gpus", "2", "--json", "--no-store"} + test::set_args(sets));
    QString err;
    QString out = read_until(*p, QProcess::StandardOutput, "\"event\":\"step\"", 60000, &err);
    QVERIFY2(out.contains("\"event\":\"step\""), qPrintable(err));
    ::kill(static_cast<pid_t>(p->processId()), SIGINT);
    QVERIFY(p->waitForFinished(60000));
    err += QString::fromUtf8(p->readAllStandardError());
    out += QString::fromUtf8(p->readAllStandardOutput());
    QVERIFY2(p->exitCode() == 0, qPrintable(err));
    QVERIFY2(out.contains("\"status\":\"stopped\""), qPrintable(out));
    QVERIFY(!QDir(QString::fromStdString(dir)).entryList({"step_*"}).isEmpty());
  }
};

QTEST_GUILESS_MAIN(TestDist)
#include "test_dist.moc"
