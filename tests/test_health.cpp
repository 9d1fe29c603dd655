// A run that watches itself: loss spikes found against the recent steps' median and MAD, and what
// health.spike_action does about them — warn, skip the update, or roll back to the last checkpoint with the data
// moved past the window that caused it — with a resume after a rollback exact on a CPU.
#include <ATen/ATen.h>

#include <QtTest>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/config.h"
#include "engine/base/run/pace_watch.h"
#include "engine/base/run/spike_detector.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/store/store_sink.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/torch/train/spike_trial.h"
#include "engine/torch/train/trainer.h"
#include "tests/support/recording_sink.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

constexpr int64_t kGarbageAt = 24;  // the 0-based data position that holds garbage tokens

Config spiky_run(test::ScratchEnv& env, const std::vector<std::string>& more) {
  Config c;
  apply_overrides(c, test::two_block_run_overrides(env.corpus_excerpt(60000)));
  apply_overrides(c, {"train.steps=40", "health.spike_window=10", "health.spike_threshold=6",
                      "health.grad_norm_threshold=50", "checkpoint.every=5",
                      "optimizer.lr=0.01", "train.batch_size=16",
                      "checkpoint.dir=" + env.path("ckpt")});
  apply_overrides(c, more);
  return c;
}

// The hook that puts garbage at data positions [from, to) and counts how often each position was read.
void put_garbage(TrainControl& control, const Config& c, std::map<int64_t, int>& reads, int64_t from, int64_t to) {
  control.batch_hook = [&reads, from, to, vocab = c.model.vocab_size](int64_t, int64_t data_step, at::Tensor& in,
                                                                      at::Tensor& tg) {
    ++reads[data_step];
    if (data_step >= from && data_step < to) fill_with_garbage(in, tg, vocab);
  };
}

// The loss of each step as the run ended up training it (a rolled-back step's later report wins).
std::map<int64_t, double> final_losses(const test::RecordingSink& r) {
  std::map<int64_t, double> out;
  for (const StepEvent& e : r.steps) out[e.step] = e.metric("loss");
  return out;
}

}  // namespace

class TestHealth : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // TOKAMAK_TRY_SPIKE_AT's garbage is always ids of the vocabulary, however small (model.vocab_size may be 2), and
  // an absurd step or length is refused in one line.
  void triedGarbageStaysInTheVocabulary() {
    for (int64_t vocab : {2, 7, 999, 1000, 50257}) {
      at::Tensor in = at::zeros({4, 16}, at::kLong), tg = at::zeros({4, 16}, at::kLong);
      fill_with_garbage(in, tg, vocab);
      QVERIFY2(in.min().item<int64_t>() >= 0 && in.max().item<int64_t>() < vocab, qPrintable(QString::number(vocab)));
      QVERIFY2(tg.min().item<int64_t>() >= 0 && tg.max().item<int64_t>() < vocab, qPrintable(QString::number(vocab)));
    }
    int64_t from = 0, to = 0;
    parse_spike_trial("120:3", &from, &to);
    QCOMPARE(from, int64_t{119});
    QCOMPARE(to, int64_t{122});
    for (const char* bad : {"9223372036854775807", "5:9223372036854775807", "0", "5:0", "x"}) {
      bool refused = false;
      try {
        parse_spike_trial(bad, &from, &to);
      } catch (const Error&) {
        refused = true;
      }
      QVERIFY2(refused, bad);
    }
  }

  void theDetectorFindsARiseAndNotTheNoise() {
    SpikeDetector d(8, 6, 6);
    const double losses[] = {5.0, 4.9, 5.1, 4.95, 5.05, 4.9, 5.0, 5.1};
    for (double l : losses) {
      QVERIFY(!d.check(l, 1.0).spike);  // nothing is decided before the window is full
      d.accept(l, 1.0);
    }
    QVERIFY(d.ready());
    QVERIFY(!d.check(5.2, 1.05).spike);  // ordinary noise
    QVERIFY(!d.check(3.0, 1.0).spike);   // a drop is never a spike
    const SpikeVerdict v = d.check(9.0, 1.0);
    QVERIFY(v.spike);
    QCOMPARE(QString::fromStdString(v.signal), QString("loss"));
    QCOMPARE(v.value, 9.0);
    QCOMPARE(v.median, 5.0);
    // MAD of the window is 0.075 → 1.4826 · 0.075 = 0.111, above the 1% floor (0.05): the limit is 5 + 6 · 0.111.
    QVERIFY2(std::abs(v.limit - (5.0 + 6 * 1.4826 * 0.075)) < 1e-9, qPrintable(QString::number(v.limit)));
    const SpikeVerdict n = d.check(5.0, 3.0);  // the gradient norm alone
    QVERIFY(n.spike);
    QCOMPARE(QString::fromStdString(n.signal), QString("grad_norm"));
    QVERIFY(!d.check(std::nan(""), 1.0).spike);  // non-finite is the skip check's, not a spike

    // A flat window (MAD 0) still has room for noise: 1% of the median.
    SpikeDetector flat(5, 6, 6);
    for (int i = 0; i < 5; ++i) flat.accept(2.0, 1.0);
    QVERIFY(!flat.check(2.1, 1.0).spike);
    QVERIFY(flat.check(2.2, 1.0).spike);

    // The window travels in a checkpoint: the copy decides as the original.
    SpikeDetector copy(8, 6, 6);
    copy.load_state_json(d.state_json());
    QVERIFY(copy.ready());
    QCOMPARE(copy.check(9.0, 1.0).limit, v.limit);
    QVERIFY_THROWS_EXCEPTION(Error, copy.load_state_json("{not json"));
  }

  // tok/s below 70% of its median for 3 reports is a slowdown, said once, naming what moved on the machine.
  // NVML's reasons: a power cap (0x4) is what slows a GPU under load, and it is named; how the clocks were set
  // (application clocks 0x2, sync boost 0x10, display clocks 0x100) and idleness (0x1) are not a slowdown.
  void aGpuHeldBackByItsPowerCapIsNamed() {
    Metrics before, now;
    before.add_count("gpu_throttle", 0x1 | 0x2 | 0x10 | 0x100);
    now.add_count("gpu_throttle", 0x2 | 0x4);
    QCOMPARE(QString::fromStdString(what_changed(before, now)), QString("the GPU is held back (its software power cap)"));
    Metrics settings;
    settings.add_count("gpu_throttle", 0x2 | 0x10 | 0x100);
    QCOMPARE(QString::fromStdString(what_changed(before, settings)), QString());
    QCOMPARE(QString::fromStdString(gpu_slowdown_names(0x40 | 0x200)),
             QString("hardware thermal slowdown, NVML reasons 0x200"));
  }

  void aSlowdownNamesWhatChanged() {
    SlowdownWatch w(0.7, 3);
    const auto report = [&](double tok_s, double others, double mhz) {
      Metrics m;
      m.add("tok_s", tok_s), m.add("others_cores", others), m.add("cpu_mhz", mhz), m.add("load_1m", 1.0);
      return w.report(m);
    };
    for (double s : {1000.0, 1010.0, 990.0, 1005.0}) QVERIFY(!report(s, 0.1, 2300));
    QVERIFY(!report(600, 1.9, 2300));  // one slow report is not yet a slowdown
    QVERIFY(!report(620, 1.9, 2300));
    const std::optional<std::string> said = report(610, 1.9, 2300);
    QVERIFY(said.has_value());
    const QString text = QString::fromStdString(*said);
    QVERIFY2(text.startsWith("610 tok/s is 61% of the run's median 1002 for 3 reports: "), qPrintable(text));
    QVERIFY2(text.contains("other processes use 1.9 cores (0.1 before)"), qPrintable(text));
    QVERIFY2(!text.contains("clock"), qPrintable(text));
    QVERIFY(!report(600, 1.9, 2300));  // said once
    QVERIFY(!report(1000, 0.1, 2300));  // the usual pace again
    for (int i = 0; i < 2; ++i) QVERIFY(!report(500, 0.1, 1200));
    const QString clock = QString::fromStdString(report(500, 0.1, 1200).value_or(""));
    QVERIFY2(clock.contains("the cores' clock fell to 1200 MHz (2300 before)"), qPrintable(clock));
    QVERIFY2(!clock.contains("other processes"), qPrintable(clock));
    // Nothing measured moved: said so, not guessed.
    SlowdownWatch quiet(0.7, 1);
    Metrics m;
    for (double s : {100.0, 100.0, 100.0}) m.add("tok_s", s), quiet.report(m), m = Metrics{};
    m.add("tok_s", 10);
    const std::string nothing = quiet.report(m).value_or("");
    QVERIFY2(nothing.find("nothing this run measures changed") != std::string::npos, nothing.c_str());
    SlowdownWatch off(0, 1);
    for (double s : {100.0, 100.0, 100.0, 1.0}) {
      m = Metrics{};
      m.add("tok_s", s);
      QVERIFY(!off.report(m));
    }
  }

  // A journal's reader: stalled after stall_factor × the run's time between reports (its own clock, so a journal
  // read from its start at once has the same pace), never while paused, then over at the next step.
  void aFollowerSaysWhenTheRunStalls() {
    JournalStallWatch w;
    const auto start = R"({"event":"start","config":{"health":{"stall_factor":5,"stall_min_s":2}}})";
    QVERIFY(!w.line(start, 100));
    for (int s = 1; s <= 4; ++s)  // reports 0.5 s apart by the run's clock, all read at t = 100
      QVERIFY(!w.line(QString(R"({"event":"step","step":%1,"wall_s":%2})").arg(s).arg(0.5 * s).toStdString(), 100));
    QVERIFY(!w.idle(102.4, [] { return false; }));  // the limit: max(5 × 0.5, 2) = 2.5 s
    QVERIFY(!w.idle(103, [] { return true; }));     // paused: silence is what was asked
    QVERIFY(!w.idle(105, [] { return false; }));    // 2 s since the pause was seen
    const std::optional<std::string> stalled = w.idle(105.6, [] { return false; });
    QVERIFY(stalled.has_value());
    const auto j = nlohmann::json::parse(*stalled);
    QCOMPARE(QString::fromStdString(j["event"].get<std::string>()), QString("stalled"));
    QCOMPARE(j["step"].get<int>(), 4);
    QVERIFY2(j["message"].get<std::string>().find("no step for 2.6 s after step 4: past the limit of 2.5 s") == 0,
             j["message"].get<std::string>().c_str());
    QVERIFY(!w.idle(200, [] { return false; }));  // said once
    const std::optional<std::string> over = w.line(R"({"event":"step","step":5,"wall_s":100})", 200);
    QVERIFY(over.has_value());
    QCOMPARE(QString::fromStdString(nlohmann::json::parse(*over)["event"].get<std::string>()), QString("stall_over"));
  }

  // A long evaluation beats with its batches and is never a stall while it does; one that stops beating is. A
  // checkpoint's heartbeat starts the silence again, and a checkpoint that outlasts the limit after it is a stall
  // (a hung write is seen at the usual limit; a queue's SIGSTOP can land mid-write).
  void longWorkThatSaysSoIsNoStall() {
    const auto fed = [](JournalStallWatch& w) {
      QVERIFY(!w.line(R"({"event":"start","config":{"health":{"stall_factor":5,"stall_min_s":2}}})", 100));
      for (int s = 1; s <= 4; ++s)
        QVERIFY(!w.line(QString(R"({"event":"step","step":%1,"wall_s":%2})").arg(s).arg(0.5 * s).toStdString(), 100));
    };
    const auto never_paused = [] { return false; };
    JournalStallWatch eval;
    fed(eval);
    for (int t = 1; t <= 60; ++t) {  // a minute of batches, a beat a second: the limit is 2.5 s
      QVERIFY(!eval.line(QString(R"({"event":"progress","what":"evaluating the val loss at step 4","done":%1,)"
                                 R"("total":60})").arg(t).toStdString(), 100 + t));
      QVERIFY(!eval.idle(100 + t + 0.9, never_paused));
    }
    QVERIFY(eval.idle(163.6, never_paused).has_value());  // then nothing for 2.6 s: stalled mid-evaluation

    JournalStallWatch checkpoint;
    fed(checkpoint);
    QVERIFY(!checkpoint.line(R"({"event":"progress","what":"writing the checkpoint of step 4","done":0,"total":0})",
                             150));
    QVERIFY(!checkpoint.idle(152.4, never_paused));  // 52 s after the last step, 2.4 s after the heartbeat
    QVERIFY(checkpoint.idle(152.6, never_paused).has_value());
  }

  // Garbage at data position 24 makes step 25 spike. warn keeps its update and counts it; skip leaves the weights
  // as they were; either way the run finishes.
  void aSpikeIsWarnedOrSkipped_data() {
    QTest::addColumn<QString>("action");
    QTest::newRow("warn") << "warn";
    QTest::newRow("skip") << "skip";
  }
  void aSpikeIsWarnedOrSkipped() {
    QFETCH(QString, action);
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const Config c = spiky_run(env, {"health.spike_action=" + action.toStdString()});
    std::map<int64_t, int> reads;
    TrainControl control;
    put_garbage(control, c, reads, kGarbageAt, kGarbageAt + 1);
    std::map<int64_t, std::vector<at::Tensor>> before;
    control.gradient_hook = [&](int64_t step, const std::vector<at::Tensor>& params) {
      for (const at::Tensor& p : params) before[step].push_back(p.detach().clone());
    };
    test::RecordingSink r;
    const EndEvent end = train(c, r, &control);
    QCOMPARE(QString::fromStdString(end.status), QString("finished"));
    QCOMPARE(end.step, 40);
    QCOMPARE(static_cast<int>(r.spikes.size()), 1);
    const SpikeEvent& e = r.spikes.front();
    QCOMPARE(e.step, kGarbageAt + 1);
    QCOMPARE(QString::fromStdString(e.signal), QString("loss"));
    QVERIFY2(e.value > e.limit && e.limit > e.median, qPrintable(QString("%1 %2 %3").arg(e.value).arg(e.limit).arg(e.median)));
    QCOMPARE(QString::fromStdString(e.action), action == "warn" ? QString("warned") : QString("skipped"));
    QCOMPARE(e.total, 1);
    bool moved = false;  // did step 25's update change the weights (seen as step 26 began)?
    for (size_t i = 0; i < before[25].size(); ++i) moved = moved || !at::equal(before[25][i], before[26][i]);
    QCOMPARE(moved, action == "warn");
    QCOMPARE(r.steps.back().metric("spikes"), 1.0);
    QCOMPARE(reads[kGarbageAt], 1);
    // The machine's health rides along on a CPU (a clock where /proc/cpuinfo has one, the load, other processes'
    // cores), and the time left counts down to 0 at the last step.
    const Metrics& last = r.steps.back().metrics;
    QVERIFY(last.has("load_1m") && last.has("others_cores") && last.get("others_cores") >= 0);
    QVERIFY(last.has("cpu_mhz") == (read_file("/proc/cpuinfo").find("cpu MHz") != std::string::npos));
    QVERIFY(r.steps[5].metric("eta_s") > 0);
    QCOMPARE(last.get("eta_s"), 0.0);
  }

  // rollback: back to step 20's checkpoint, data positions 20–24 passed over (never read again), the run finishes
  // its 40 steps; a second run stopped after the rollback and resumed from its checkpoint repeats the first's
  // losses bit for bit; the store keeps each step once, as finally trained.
  void aRollbackMovesPastTheDataAndResumesExactly() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const Config c = spiky_run(env, {"health.spike_action=rollback", "health.rollback_lr_scale=0.5",
                                     "health.rollback_lr_steps=3"});
    std::map<int64_t, int> reads;
    TrainControl control;
    put_garbage(control, c, reads, kGarbageAt, kGarbageAt + 1);
    test::RecordingSink whole;
    const std::string db = env.path("runs.db");
    {
      StoreSink store(db);
      FanOutSink both;
      both.add(&whole), both.add(&store);
      const EndEvent end = train(c, both, &control);
      QCOMPARE(QString::fromStdString(end.status), QString("finished"));
      QCOMPARE(end.step, 40);
    }
    QCOMPARE(static_cast<int>(whole.spikes.size()), 1);
    const SpikeEvent& e = whole.spikes.front();
    QCOMPARE(QString::fromStdString(e.action), QString("rolled back"));
    QCOMPARE(e.step, kGarbageAt + 1);
    QCOMPARE(e.to_step, 20);
    QCOMPARE(e.data_skipped, 5);
    QCOMPARE(reads[kGarbageAt], 1);  // the garbage was read once: the run went on past it
    QCOMPARE(reads[kGarbageAt + 5], 1);
    QCOMPARE(reads[kGarbageAt + 20], 1);  // step 40 read position 44
    QCOMPARE(reads.count(kGarbageAt + 21), size_t{0});
    // The lowered learning rate for the 3 steps after the rollback, then the schedule's own.
    std::map<int64_t, double> lr;
    for (const StepEvent& s : whole.steps) lr[s.step] = s.metric("lr");
    QVERIFY2(lr[21] < lr[20] * 0.6, qPrintable(QString("%1 %2").arg(lr[21]).arg(lr[20])));
    QVERIFY(lr[24] > lr[23] * 1.5);
    const std::map<int64_t, double> losses = final_losses(whole);

    // The store: one row a step, the values of the steps as finally trained.
    {
      RunStore store(db);
      Stmt s(store.db(),
             "SELECT step, value FROM metric_values WHERE key_id = (SELECT id FROM metric_keys WHERE name = "
             "'train_loss') ORDER BY step");
      int rows = 0;
      while (s.step()) {
        ++rows;
        QCOMPARE(s.real(1), losses.at(s.int64(0)));
      }
      QCOMPARE(rows, 40);
    }

    // The same run, stopped at step 33 (after its rollback), resumed from that checkpoint.
    Config first = c;
    first.checkpoint.dir = env.path("ckpt2");
    std::map<int64_t, int> reads2;
    TrainControl halted;
    put_garbage(halted, c, reads2, kGarbageAt, kGarbageAt + 1);
    halted.halt_at_step = 33;
    test::RecordingSink part;
    QCOMPARE(QString::fromStdString(train(first, part, &halted).status), QString("stopped"));
    QCOMPARE(part.checkpoints.back().step, 33);
    Config resumed = first;
    resumed.checkpoint.resume = part.checkpoints.back().path;
    TrainControl rest_control;
    put_garbage(rest_control, c, reads2, kGarbageAt, kGarbageAt + 1);
    test::RecordingSink rest;
    QCOMPARE(QString::fromStdString(train(resumed, rest, &rest_control).status), QString("finished"));
    QVERIFY(rest.spikes.empty());
    QCOMPARE(static_cast<int>(rest.steps.size()), 7);
    for (const StepEvent& s : rest.steps) QCOMPARE(s.metric("loss"), losses.at(s.step));  // bit for bit
    QCOMPARE(rest.steps.back().metric("spikes"), 1.0);  // the count came with the checkpoint
  }

  // Garbage from position 24 on: every step spikes; with health.max_spikes=3 the fourth fails the run in one line.
  void aRunThatKeepsSpikingFails() {
    test::ScratchEnv env;
    QVERIFY2(env.ok(), "assets missing: run scripts/setup.sh");
    const Config c = spiky_run(env, {"health.spike_action=skip", "health.max_spikes=3"});
    std::map<int64_t, int> reads;
    TrainControl control;
    put_garbage(control, c, reads, kGarbageAt, 1000);
    test::RecordingSink r;
    const EndEvent end = train(c, r, &control);
    QCOMPARE(QString::fromStdString(end.status), QString("failed"));
    QCOMPARE(end.step, kGarbageAt + 4);
    QVERIFY2(end.error.find("keeps spiking: 4 spikes by step 28") != std::string::npos, end.error.c_str());
    QVERIFY2(end.error.find("health.max_spikes") != std::string::npos, end.error.c_str());
    QVERIFY(end.error.find('\n') == std::string::npos);
    QCOMPARE(static_cast<int>(r.spikes.size()), 3);
  }
};

QTEST_GUILESS_MAIN(TestHealth)
#include "test_health.moc"
