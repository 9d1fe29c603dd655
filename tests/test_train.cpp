// The training step and loop: gradient accumulation, the fused optimizer, resume, overfitting, stop.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>
#include <torch/nn/module.h>

#include <QtTest>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/base/config/config.h"
#include "engine/torch/model/gpt.h"
#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/torch/optim/optimizer.h"
#include "engine/torch/train/step.h"
#include "engine/torch/train/trainer.h"
#include "engine/torch/device/cpu_peak.h"
#include "engine/torch/device/device.h"
#include "engine/base/util/files.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

GPTOptions small_model() { return GPTOptions::from_config(test::tiny_model(), SpeedConfig{}); }

Config tiny_run(const std::string& data) {
  Config c;
  apply_overrides(c, test::two_block_run_overrides(data));
  return c;
}

// Copies of the weights, to compare across steps.
std::vector<at::Tensor> snapshot(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& p : params) out.push_back(p.detach().clone());
  return out;
}

bool same_weights(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!at::equal(a[i], b[i])) return false;
  return a.size() == b.size();
}

// A NaN in one gradient element: the loss stays finite, the gradient norm does not.
void poison_gradient(const std::vector<at::Tensor>& params) {
  at::NoGradGuard no_grad;
  params.front().grad().view(-1)[0] = std::numeric_limits<float>::quiet_NaN();
}

std::vector<std::pair<std::string, at::Tensor>> named(GPTImpl& m) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& p : m.named_parameters()) out.emplace_back(p.key(), p.value());
  return out;
}

}  // namespace

class TestTrain : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // A CPU's peak memory is the process's high-water mark of resident memory: reset_peak_memory sets it back to
  // what is resident now, so each `bench` rung reports its own peak, not the largest one before it.
  void cpuPeakMemoryResets() {
    const c10::Device cpu(c10::kCPU);
    constexpr int64_t kBytes = int64_t{512} << 20;
    reset_peak_memory(cpu);
    const int64_t before = memory_use(cpu).peak;
    {
      const at::Tensor big = at::ones({kBytes / 4});  // every page written
      QCOMPARE(big[kBytes / 4 - 1].item<float>(), 1.0f);
      QVERIFY2(memory_use(cpu).peak >= before + kBytes, qPrintable(QString::number(memory_use(cpu).peak)));
    }
    reset_peak_memory(cpu);
    const int64_t after = memory_use(cpu).peak;
    QVERIFY2(after < before + kBytes / 2,
             qPrintable(
                 QString("peak %1 MiB after the reset, %2 MiB before the tensor").arg(after >> 20).arg(before >> 20)));
  }

  // speed.precision=auto (the default) becomes bf16 only where the device has bf16 in hardware (a CPU without it
  // emulates bf16 GEMMs ~100× slower than fp32) and, on a CPU, where its bf16 GEMM was measured faster than its
  // fp32 one (a 2-core Xeon with AVX-512 BF16 but no AMX ran bf16 at half the fp32 rate); the run records the
  // concrete value, so its config says what it trained with.
  void autoPrecisionIsResolvedAndRecorded() {
    QCOMPARE(QString::fromStdString(name_of(Config{}.speed.precision)), QString("auto"));
    QCOMPARE(QString::fromStdString(name_of(resolved_precision(find_choice(precision_choices(), "speed.precision", "fp32").kind, "cpu"))), QString("fp32"));  // explicit stays
    QCOMPARE(QString::fromStdString(name_of(resolved_precision(find_choice(precision_choices(), "speed.precision", "bf16").kind, "cpu"))), QString("bf16"));
    QFile cpuinfo("/proc/cpuinfo");
    QVERIFY(cpuinfo.open(QIODevice::ReadOnly));
    const QByteArray flags = cpuinfo.readAll();
    const bool hardware = flags.contains(" avx512_bf16") || flags.contains(" amx_bf16");

    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(40000));
    apply_overrides(c, {"train.steps=1", "speed.precision=auto"});
    test::RecordingSink r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    // With the instructions, the run measured both rates and decided by them; without, it measured nothing.
    const std::optional<bool> pays = cpu_bf16_pays(static_cast<int>(c.threads));
    QCOMPARE(pays.has_value(), hardware);
    const QString expected = hardware && *pays ? "bf16" : "fp32";
    QCOMPARE(QString::fromStdString(name_of(config_from_json(r.start.config_json).speed.precision)), expected);
    QVERIFY2(r.start.name.find("-" + expected.toStdString()) != std::string::npos, r.start.name.c_str());
    if (!hardware) return;
    // The decision follows the rates: a cache saying bf16 is the slower (or the faster) turns auto accordingly.
    at::set_num_threads(static_cast<int>(c.threads));
    const auto key_of = [&](const std::string& p) {
      return device_name(c10::Device(c10::kCPU)) + "|" + p + "|" + std::to_string(c.threads) + "|" + TORCH_VERSION;
    };
    const auto cache_says = [&](double fp32, double bf16) {
      nlohmann::json j;
      j[key_of("fp32")] = fp32;
      j[key_of("bf16")] = bf16;
      write_file_atomically(cache_dir() + "/cpu_peak.json", j.dump());
    };
    cache_says(3e11, 1.6e11);
    QCOMPARE(QString::fromStdString(name_of(resolved_precision(find_choice(precision_choices(), "speed.precision", "auto").kind, "cpu"))), QString("fp32"));
    cache_says(1.8e11, 8.3e11);
    QCOMPARE(QString::fromStdString(name_of(resolved_precision(find_choice(precision_choices(), "speed.precision", "auto").kind, "cpu"))), QString("bf16"));
    std::remove((cache_dir() + "/cpu_peak.json").c_str());  // made-up rates are no later test's measurement
  }
  void accumulationEqualsOneBigBatch_data() {
    QTest::addColumn<int>("k");
    QTest::newRow("2 x (B/2)") << 2;
    QTest::newRow("4 x (B/4)") << 4;
  }
  void accumulationEqualsOneBigBatch() {
    QFETCH(int, k);
    torch::manual_seed(11);
    GPT model(small_model());
    auto tokens = at::randint(64, {8, 17}, at::kLong);
    Batch full{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
    auto one = forward_backward(
        *model, [&](int64_t) { return full; }, 1, Precision::kFp32, c10::kCPU);
    std::map<std::string, at::Tensor> reference;
    for (const auto& p : model->named_parameters()) reference[p.key()] = p.value().grad().clone();
    for (auto& p : model->parameters()) p.mutable_grad() = at::Tensor();
    const int64_t b = 8 / k;
    auto acc = forward_backward(
        *model,
        [&](int64_t micro) {
          return Batch{full.inputs.narrow(0, micro * b, b), full.targets.narrow(0, micro * b, b)};
        },
        k, Precision::kFp32, c10::kCPU);
    QVERIFY(std::abs(one.loss.item<double>() - acc.loss.item<double>()) < 1e-6);
    for (const auto& p : model->named_parameters()) {
      double diff = (p.value().grad() - reference[p.key()]).abs().max().item<double>();
      // Stated tolerance: float rounding of a sum taken in another order.
      QVERIFY2(diff < 1e-6, qPrintable(QString::fromStdString(p.key()) + QString(": %1").arg(diff)));
    }
  }

  void fusedAdamWMatchesTheLoop() {
    torch::manual_seed(12);
    GPT a(small_model()), b(small_model());
    {
      torch::NoGradGuard no_grad;
      auto bp = b->named_parameters();
      for (const auto& p : a->named_parameters()) bp[p.key()].copy_(p.value());
    }
    AdamW loop(named(*a), AdamWOptions{0.9, 0.95, 1e-8, 0.1, false});
    AdamW fused(named(*b), AdamWOptions{0.9, 0.95, 1e-8, 0.1, true});
    auto tokens = at::randint(64, {4, 17}, at::kLong);
    Batch batch{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
    for (int step = 0; step < 5; ++step) {
      loop.zero_grad(), fused.zero_grad();
      forward_backward(
          *a, [&](int64_t) { return batch; }, 1, Precision::kFp32, c10::kCPU);
      forward_backward(
          *b, [&](int64_t) { return batch; }, 1, Precision::kFp32, c10::kCPU);
      loop.step(1e-3), fused.step(1e-3);
    }
    auto bp = b->named_parameters();
    for (const auto& p : a->named_parameters()) {
      double diff = (p.value() - bp[p.key()]).abs().max().item<double>();
      // Stated tolerance: 1% of one step (lr = 1e-3); the kernel orders its float operations differently.
      QVERIFY2(diff < 1e-5, qPrintable(QString::fromStdString(p.key()) + QString(": %1").arg(diff)));
    }
  }

  // A step the fused kernel skips (found_inf = 1, what the loop passes on CUDA) changes neither the weights
  // nor the step counters: the next real step equals the loop AdamW's first step from the same weights.
  void fusedAdamWSkipLeavesNoTrace() {
    torch::manual_seed(14);
    GPT a(small_model()), b(small_model());
    {
      torch::NoGradGuard no_grad;
      auto bp = b->named_parameters();
      for (const auto& p : a->named_parameters()) bp[p.key()].copy_(p.value());
    }
    AdamW loop(named(*a), AdamWOptions{0.9, 0.95, 1e-8, 0.1, false});
    AdamW fused(named(*b), AdamWOptions{0.9, 0.95, 1e-8, 0.1, true});
    auto tokens = at::randint(64, {4, 17}, at::kLong);
    Batch batch{tokens.narrow(1, 0, 16).contiguous(), tokens.narrow(1, 1, 16).contiguous()};
    const auto weights = snapshot(b->parameters());
    fused.zero_grad();
    forward_backward(
        *b, [&](int64_t) { return batch; }, 1, Precision::kFp32, c10::kCPU);
    fused.step(1e-3, at::ones({}, at::kFloat));
    QVERIFY(same_weights(weights, snapshot(b->parameters())));
    loop.zero_grad(), fused.zero_grad();
    forward_backward(
        *a, [&](int64_t) { return batch; }, 1, Precision::kFp32, c10::kCPU);
    forward_backward(
        *b, [&](int64_t) { return batch; }, 1, Precision::kFp32, c10::kCPU);
    loop.step(1e-3), fused.step(1e-3, at::zeros({}, at::kFloat));
    auto bp = b->named_parameters();
    for (const auto& p : a->named_parameters()) {
      double diff = (p.value() - bp[p.key()]).abs().max().item<double>();
      // As fusedAdamWMatchesTheLoop: 1% of a step. A counter left at 2 would change the first step's
      // bias correction and shrink the update by about a quarter (2.6e-4 here).
      QVERIFY2(diff < 1e-5, qPrintable(QString::fromStdString(p.key()) + QString(": %1").arg(diff)));
    }
  }

  // CUDA graphs read each step's lr from a 0-dim float tensor on the device; eager runs pass it from the host. Both
  // must feed the kernel the same bits, or graphed and eager runs part in the low bits of some weights. lrs that a
  // float cannot hold (warm-up and cosine values), and a group with a scale of its own (the device multiplies in
  // float): a double lr moves some of these 4,096-element tensors by an ulp.
  void fusedAdamWHostAndDeviceLrAreTheSame() {
    torch::manual_seed(15);
    std::vector<AdamWSlot> host_slots, device_slots;
    std::vector<at::Tensor> grads;
    for (double scale : {1.0, 0.37, 3.1}) {
      const at::Tensor p = at::randn({64, 64}), g = at::randn({64, 64}) * 1e-2;
      const std::string name = "w" + std::to_string(host_slots.size());
      host_slots.push_back({name, p.clone(), g, true, scale});
      device_slots.push_back({name, p.clone(), g, true, scale});
    }
    AdamW host(host_slots, AdamWOptions{0.9, 0.95, 1e-8, 0.1, true});
    AdamW device(device_slots, AdamWOptions{0.9, 0.95, 1e-8, 0.1, true});
    for (int step = 1; step <= 6; ++step) {
      const double lr = 6e-4 * step / 7.0;
      host.step(lr);
      device.step_device_lr(at::full({}, lr, at::kFloat), {});
    }
    for (size_t i = 0; i < host_slots.size(); ++i) {
      const int64_t differ = host_slots[i].param.ne(device_slots[i].param).sum().item<int64_t>();
      QVERIFY2(differ == 0, qPrintable(QString("group %1: %2 weights differ").arg(i).arg(differ)));
    }
  }

  void clippingBoundsTheNorm() {
    torch::manual_seed(13);
    GPT model(small_model());
    auto tokens = at::randint(64, {4, 17}, at::kLong);
    forward_backward(
        *model,
        [&](int64_t) {
          return Batch{tokens.narrow(1, 0, 16), tokens.narrow(1, 1, 16)};
        },
        1, Precision::kFp32, c10::kCPU);
    double before = clip_grad_norm(model->parameters(), 0.01).item<double>();
    QVERIFY(before > 0.01);
    double after = clip_grad_norm(model->parameters(), 0).item<double>();
    QVERIFY2(std::abs(after - 0.01) < 1e-4, qPrintable(QString::number(after)));
  }

  void tinyModelOverfitsAShortText() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    std::string text;
    for (int i = 0; i < 40; ++i) text += "The quick brown fox jumps over the lazy dog. ";
    std::string file = env.path("fox.txt");
    QFile f(QString::fromStdString(file));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text.c_str());
    f.close();
    Config c = tiny_run(file);
    apply_overrides(c, {"train.steps=150", "optimizer.lr=1e-2", "schedule.min_lr_ratio=1", "train.log_every=10",
                        "data.val_fraction=0"});
    test::RecordingSink r;
    EndEvent end = train(c, r);
    QCOMPARE(QString::fromStdString(end.status), QString("finished"));
    QVERIFY2(r.steps.front().metric("loss") > 9.0, qPrintable(QString::number(r.steps.front().metric("loss"))));
    QVERIFY2(r.steps.back().metric("loss") < 0.5, qPrintable(QString::number(r.steps.back().metric("loss"))));
  }

  // An evaluation or a checkpoint long enough to look like a stall to whoever watches the journal is announced
  // first: a heartbeat (a progress event without a total) comes right before each, so a watcher never ends a run
  // that is evaluating.
  void longWorkIsAnnouncedFirst() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=6", "eval.every=3", "eval.batches=1", "checkpoint.every=3",
                        "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink r;
    QCOMPARE(QString::fromStdString(train(c, r).status), QString("finished"));
    QVERIFY(!r.evals.empty() && !r.checkpoints.empty());
    // An evaluation counts its batches (it beats as it goes); a checkpoint is one piece of work, announced by a
    // heartbeat without a total (test_health: what a stall watch makes of each).
    int evals = 0, checkpoints = 0;
    for (size_t i = 0; i < r.order.size(); ++i) {
      if (r.order[i] != "eval" && r.order[i] != "checkpoint") continue;
      ++(r.order[i] == "eval" ? evals : checkpoints);
      const char* announced = r.order[i] == "eval" ? "progress" : "heartbeat";
      QVERIFY2(i > 0 && r.order[i - 1] == announced, qPrintable(QString("%1 at %2 came unannounced").arg(
                                                          QString::fromStdString(r.order[i])).arg(i)));
    }
    QCOMPARE(evals, int(r.evals.size()));
    QCOMPARE(checkpoints, int(r.checkpoints.size()));
    int counted = 0;
    for (const ProgressEvent& p : r.progress)
      if (p.what.rfind("evaluating the val loss", 0) == 0) {
        QCOMPARE(p.total, uint64_t{1});
        ++counted;
      }
    QCOMPARE(counted, evals);  // one batch each: the first beat only, the last is the eval itself
  }

  void resumeGivesTheSameNextLosses() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c,
                    {"train.steps=8", "checkpoint.every=4", "model.dropout=0.1", "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink whole;
    QCOMPARE(QString::fromStdString(train(c, whole).status), QString("finished"));
    QCOMPARE(static_cast<int>(whole.steps.size()), 8);
    QVERIFY(!whole.checkpoints.empty());
    QCOMPARE(whole.checkpoints.front().step, 4);

    Config resumed = c;
    resumed.checkpoint.resume = whole.checkpoints.front().path;
    test::RecordingSink rest;
    QCOMPARE(QString::fromStdString(train(resumed, rest).status), QString("finished"));
    QCOMPARE(rest.start.run_uid, whole.start.run_uid);  // the same run continues
    QCOMPARE(static_cast<int>(rest.steps.size()), 4);
    for (int i = 0; i < 4; ++i) {
      QCOMPARE(rest.steps[i].step, whole.steps[4 + i].step);
      QCOMPARE(rest.steps[i].metric("loss"), whole.steps[4 + i].metric("loss"));  // bit for bit on the CPU
    }
  }

  // speed.precision=fp16 through the trainer: a start scale far too big overflows, and every overflow is the loss
  // scale's own skip (counted in scale_skipped_steps, the scale halved each time, never a non-finite skip that could
  // end the run, never a spike); then the scale holds and the model trains on.
  void anFp16OverflowBacksOffAndTrainsOn() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=40", "speed.precision=fp16", "speed.loss_scale_init=1099511627776",  // 2^40
                        "speed.loss_scale_interval=1000", "train.max_skipped_steps=2", "optimizer.lr=3e-3",
                        "train.log_every=1", "health.spike_window=5"});
    test::RecordingSink r;
    const EndEvent end = train(c, r);
    QVERIFY2(end.status == "finished", end.error.c_str());
    const StepEvent& last = r.steps.back();
    const int64_t overflows = static_cast<int64_t>(last.metric("scale_skipped_steps"));
    QVERIFY2(overflows >= 10, qPrintable(QString::number(overflows)));  // 2^40 down to where fp16 holds the gradients
    QCOMPARE(last.metric("loss_scale"), std::ldexp(1.0, 40 - static_cast<int>(overflows)));  // halved at each
    QCOMPARE(last.metric("skipped_steps"), 0.0);  // none counted as a fault
    QVERIFY(r.skips.empty() && r.spikes.empty());
    QVERIFY2(r.steps.back().metric("loss") < r.steps[static_cast<size_t>(overflows)].metric("loss") - 0.05,
             qPrintable(QString("%1 → %2").arg(r.steps[static_cast<size_t>(overflows)].metric("loss")).arg(last.metric("loss"))));
  }

  // An fp16 run resumed from its checkpoint continues bit for bit: the scale and its count of good steps are in the
  // checkpoint (here the scale overflows and grows within the eight steps, so both matter).
  void anFp16ResumeIsExact() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=8", "checkpoint.every=4", "speed.precision=fp16",
                        "speed.loss_scale_init=16777216", "speed.loss_scale_interval=3", "train.log_every=1",
                        "checkpoint.dir=" + env.path("ckpt")});
    test::RecordingSink whole;
    QCOMPARE(QString::fromStdString(train(c, whole).status), QString("finished"));
    QCOMPARE(whole.checkpoints.front().step, 4);
    Config resumed = c;
    resumed.checkpoint.resume = whole.checkpoints.front().path;
    test::RecordingSink rest;
    QCOMPARE(QString::fromStdString(train(resumed, rest).status), QString("finished"));
    QCOMPARE(static_cast<int>(rest.steps.size()), 4);
    for (int i = 0; i < 4; ++i) {
      QCOMPARE(rest.steps[i].metric("loss"), whole.steps[4 + i].metric("loss"));
      QCOMPARE(rest.steps[i].metric("loss_scale"), whole.steps[4 + i].metric("loss_scale"));
    }
    // The scale moved within the run: a resume that started from the config's scale would differ.
    QVERIFY(whole.steps[3].metric("loss_scale") != 16777216.0);
  }

  // Steps 3 and 4 get a NaN gradient with a finite loss: both are skipped (the weights after step 4 are
  // those after step 2), counted in an event and in the skipped_steps metric, and the run goes on.
  void nonFiniteGradientsSkipTheStep() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=8", "train.max_skipped_steps=2", "checkpoint.dir=" + env.path("ckpt")});
    std::map<int64_t, std::vector<at::Tensor>> before;  // weights as each step began
    TrainControl control;
    control.gradient_hook = [&](int64_t step, const std::vector<at::Tensor>& params) {
      before[step] = snapshot(params);
      if (step == 3 || step == 4) poison_gradient(params);
    };
    test::RecordingSink r;
    EndEvent end = train(c, r, &control);
    QCOMPARE(QString::fromStdString(end.status), QString("finished"));
    QVERIFY(!same_weights(before[2], before[3]));  // a good step moves the weights
    QVERIFY(same_weights(before[3], before[5]));   // two skipped steps did not
    QVERIFY(!same_weights(before[5], before[6]));  // and training went on
    QCOMPARE(static_cast<int>(r.skips.size()), 2);
    QCOMPARE(r.skips[0].step, 3);
    QCOMPARE(r.skips[1].in_a_row, 2);
    QCOMPARE(r.skips[1].total, 2);
    QVERIFY2(r.skips[0].reason.find("gradients are nan") != std::string::npos, r.skips[0].reason.c_str());
    QCOMPARE(static_cast<int>(r.steps.size()), 8);
    QVERIFY(std::isfinite(r.steps[2].metric("loss")));  // the loss of a skipped step was finite
    QVERIFY(!r.steps[2].metrics.has("grad_norm"));      // its norm was not: left out, not NaN
    QCOMPARE(r.steps[1].metric("skipped_steps"), 0.0);
    QCOMPARE(r.steps[7].metric("skipped_steps"), 2.0);
  }

  // From step 4 on every gradient is NaN: with train.max_skipped_steps=2 the third skipped step in a row
  // (step 6) fails the run, and the checkpoint written on failure is step 3's — its weights, its step.
  void tooManySkippedStepsFailWithTheLastGoodCheckpoint() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=20", "train.max_skipped_steps=2", "checkpoint.dir=" + env.path("ckpt")});
    std::map<int64_t, std::vector<at::Tensor>> before;
    TrainControl control;
    control.gradient_hook = [&](int64_t step, const std::vector<at::Tensor>& params) {
      before[step] = snapshot(params);
      if (step >= 4) poison_gradient(params);
    };
    test::RecordingSink r;
    EndEvent end = train(c, r, &control);
    QCOMPARE(QString::fromStdString(end.status), QString("failed"));
    QCOMPARE(end.step, 6);
    QVERIFY2(end.error.find("3 steps in a row") != std::string::npos, end.error.c_str());
    QVERIFY2(end.error.find("weights are those of step 3") != std::string::npos, end.error.c_str());
    QVERIFY2(end.error.find("train.max_skipped_steps") != std::string::npos, end.error.c_str());
    QCOMPARE(static_cast<int>(r.skips.size()), 3);
    QCOMPARE(static_cast<int>(r.checkpoints.size()), 1);
    QCOMPARE(r.checkpoints.back().step, 3);
    GPT model(GPTOptions::from_config(c.model, c.speed));
    CheckpointInfo info = load_checkpoint(r.checkpoints.back().path, *model, nullptr, false, c10::kCPU);
    QCOMPARE(info.step, 3);
    QCOMPARE(info.tokens, 3 * tokens_per_step(c));
    QVERIFY(same_weights(snapshot(model->parameters()), before[4]));  // the weights after step 3, not NaN
  }

  void stopLeavesACheckpoint() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    Config c = tiny_run(env.corpus_excerpt(60000));
    apply_overrides(c, {"train.steps=1000", "checkpoint.dir=" + env.path("ckpt")});
    TrainControl control;
    test::RecordingSink r;
    r.on_each_step = [&](const StepEvent& e) {
      if (e.step == 3) control.stop = true;
    };
    EndEvent end = train(c, r, &control);
    QCOMPARE(QString::fromStdString(end.status), QString("stopped"));
    QCOMPARE(end.step, 3);
    QCOMPARE(static_cast<int>(r.checkpoints.size()), 1);
    QVERIFY(QFile::exists(QString::fromStdString(r.checkpoints.back().path)));
  }
};

QTEST_GUILESS_MAIN(TestTrain)
#include "test_train.moc"
