// Each kind of a step's work against its floor (engine/base/perf/speed_of_light.h): the work counted from the
// model's shapes agrees with MFU's count, a floor is the larger of its compute and memory times, the memory
// limit is read at the kind's working set, the table says what it held each kind against, a run's start names
// both limits, and the bandwidth cache's entries read back as the rates they hold.
#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/base/config/config.h"
#include "engine/base/perf/flops.h"
#include "engine/torch/metrics/memory_bandwidth.h"
#include "engine/base/perf/speed_of_light.h"

using namespace tokamak;

namespace {

Config gpt2(const std::string& precision) {
  Config c;
  c.model.n_layer = 12, c.model.n_head = 12, c.model.n_embd = 768, c.model.context = 1024;
  c.train.batch_size = 4, c.train.grad_accum = 2;
  set_key(c, "speed.precision", precision);
  return c;
}

// Three working sets, the smaller the faster, as caches make them.
MemoryBandwidth three_rates() {
  MemoryBandwidth b;
  b.rates = {{1e3, 100e9}, {1e6, 50e9}, {1e9, 10e9}};
  b.source = "three made-up rates";
  return b;
}

}  // namespace

class TestSpeedOfLight : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Two independent counts of the same FLOPs: the matmuls' and attention's here (attention's causal half doubled
  // back) against MFU's 6N + 12·L·C·T a token, N the weights a token multiplies (linear, head, biases, norms).
  void matmulAndAttentionAgreeWithMfusCount() {
    const Config c = gpt2("bf16");
    const auto w = step_work(c);
    const double tokens = 4.0 * 1024 * 2, C = 768, L = 12, V = padded_vocab(c.model);
    QCOMPARE(V, 50304.0);
    const double n = L * 12 * C * C + C * V;  // without biases and norms: MFU's N has ~0.1% more
    const double mfu = flops_per_token(static_cast<int64_t>(n), 12, 768, 1024) * tokens;
    QCOMPARE(w.at("matmul").flops + 2 * w.at("attention").flops, mfu);
    QCOMPARE(w.at("attention").flops, 6 * L * C * 1024 * tokens);
    QCOMPARE(w.at("matmul").bytes, 0.0);
  }

  // Halving the number format halves the activations' bytes; the fp32 stream and AdamW's state do not move.
  void bytesFollowTheNumberFormat() {
    const auto fp32 = step_work(gpt2("fp32")), bf16 = step_work(gpt2("bf16")), pure = step_work(gpt2("bf16-pure"));
    QCOMPARE(bf16.at("activation").bytes * 2, fp32.at("activation").bytes);
    QCOMPARE(bf16.at("head").bytes * 2, fp32.at("head").bytes);
    QVERIFY(bf16.at("norm").bytes < fp32.at("norm").bytes && pure.at("norm").bytes < bf16.at("norm").bytes);
    QCOMPARE(bf16.at("optimizer").bytes, fp32.at("optimizer").bytes);
    // Autocast's weight casts: fp32 read, bf16 written, once a step; none in fp32 or with bf16 weights.
    QCOMPARE(bf16.at("casts/copies").bytes, 12 * 12 * 768.0 * 768 * 6);
    QVERIFY(!fp32.count("casts/copies") && !pure.count("casts/copies"));
    // AdamW's 28 bytes a parameter: blocks, the tied embedding, the position embeddings.
    QCOMPARE(fp32.at("optimizer").bytes, 28 * (12 * 12 * 768.0 * 768 + 50304.0 * 768 + 1024.0 * 768));
    Config muon = gpt2("fp32");
    muon.optimizer.name = OptimizerKind::kMuon;
    QVERIFY(!step_work(muon).count("optimizer"));  // no model of Muon's traffic: not counted, not guessed
  }

  void rateIsReadAtTheWorkingSet() {
    const MemoryBandwidth b = three_rates();
    QCOMPARE(b.rate_for(10), 100e9);   // below every measured set: the fastest
    QCOMPARE(b.rate_for(5e5), 100e9);  // the largest set not larger than it
    QCOMPARE(b.rate_for(1e6), 50e9);
    QCOMPARE(b.rate_for(1e12), 10e9);
    QCOMPARE(b.dram(), 10e9);
    QCOMPARE(MemoryBandwidth().rate_for(1e6), -1.0);
    QCOMPARE(MemoryBandwidth().dram(), -1.0);
    // A small set sampled while the cores were busy (1 GB/s, under the larger sets' rates) is read as no slower
    // than the next larger set: its floor can no longer exceed the time the kind took.
    MemoryBandwidth noisy = three_rates();
    noisy.rates.front().bytes_per_s = 1e9;
    QCOMPARE(noisy.rate_for(10), 50e9);
    QCOMPARE(noisy.rate_for(1e12), 10e9);
  }

  // A GPU's small copies are timed by the host's launch cost, not its memory: every kind is held to the largest
  // set's rate there, however small its calls (the optimizer's ~40 calls, the casts' hundreds).
  void gpuKindsAreHeldToTheLargestSet() {
    Config c = gpt2("bf16");
    c.device = "cuda";
    const auto w = step_work(c);
    const std::map<std::string, Measured> measured = {{"casts/copies", {5, 300}}, {"optimizer", {3, 40}}};
    const auto rows = speed_of_light(c, measured, 100e12, three_rates());
    QCOMPARE(rows.size(), size_t(2));
    for (const KindFloor& r : rows) {
      QVERIFY2(three_rates().rate_for(r.bytes / r.calls) != three_rates().dram(), "the case must tell the two apart");
      QCOMPARE(r.floor_ms, 1e3 * w.at(r.kind).bytes / three_rates().dram());
    }
  }

  void floorIsTheLargerOfComputeAndMemory() {
    const Config c = gpt2("fp32");
    const auto w = step_work(c);
    const std::map<std::string, Measured> measured = {
        {"matmul", {2000, 100}}, {"norm", {50, 10}}, {"other", {7, 3}}, {"optimizer", {40, 1}}};
    const double peak = 100e12;
    const auto rows = speed_of_light(c, measured, peak, three_rates());
    QCOMPARE(rows.size(), size_t(4));  // the measured kinds only, in op_kinds()' order
    QCOMPARE(QString::fromStdString(rows[0].kind), QString("matmul"));
    QCOMPARE(rows[0].floor_ms, 1e3 * w.at("matmul").flops / peak);
    QCOMPARE(QString::fromStdString(rows[0].bound), QString("compute"));
    QCOMPARE(rows[0].of_limit, rows[0].floor_ms / 2000);
    QCOMPARE(QString::fromStdString(rows[1].kind), QString("norm"));
    // 10 calls: each touches a tenth of the bytes, which sets the rate it is held to.
    const double per_call = w.at("norm").bytes / 10;
    QCOMPARE(rows[1].floor_ms, 1e3 * w.at("norm").bytes / three_rates().rate_for(per_call));
    QCOMPARE(QString::fromStdString(rows[1].bound), QString("memory"));
    QCOMPARE(QString::fromStdString(rows[2].kind), QString("optimizer"));
    QCOMPARE(rows[2].floor_ms, 1e3 * w.at("optimizer").bytes / 10e9);
    QCOMPARE(QString::fromStdString(rows[3].kind), QString("other"));
    QCOMPARE(rows[3].floor_ms, -1.0);  // no model of its work: no floor, and said so
    QCOMPARE(rows[3].of_limit, -1.0);
    // Without a matmul limit the compute-bound kinds have no floor rather than a zero one.
    const auto unknown = speed_of_light(c, {{"matmul", {2000, 100}}}, -1, MemoryBandwidth());
    QCOMPARE(unknown[0].floor_ms, -1.0);
  }

  void tableAddsTheFloorsUp() {
    const Config c = gpt2("fp32");
    const std::map<std::string, Measured> measured = {{"matmul", {2000, 100}}, {"norm", {50, 10}}, {"other", {7, 3}}};
    const auto rows = speed_of_light(c, measured, 100e12, three_rates());
    const QString text = QString::fromStdString(speed_of_light_table(rows, 100e12, "datasheet", three_rates()));
    QVERIFY2(text.startsWith("kind "), qPrintable(text));
    QVERIFY2(text.contains(QRegularExpression("\\nother +7\\.00 +- +- +- +- +- +not counted")), qPrintable(text));
    const double floor = rows[0].floor_ms + rows[1].floor_ms;
    QVERIFY2(text.contains(QString("speed of light: 2057.00 ms/step measured, floor %1 ms").arg(floor, 0, 'f', 2)),
             qPrintable(text));
    QVERIFY2(text.contains("7.00 ms in kinds with no count"), qPrintable(text));
    QVERIFY2(text.contains("limits: matmul 100 TFLOP/s (datasheet); memory 10 GB/s from memory"), qPrintable(text));
    // The made-up rates put norm's floor above its 50 ms (125.8% of limit): printed with a warning naming it alone,
    // never silently; a floor within the time gets none.
    QVERIFY2(text.contains("warning: the floor of norm is above its measured time"), qPrintable(text));
    auto within = rows;
    within[1].of_limit = 0.9;
    const QString quiet = QString::fromStdString(speed_of_light_table(within, 100e12, "datasheet", three_rates()));
    QVERIFY2(!quiet.contains("warning"), qPrintable(quiet));
  }

  // A run's start states both limits, each with where it came from, and says "unknown" rather than a made-up 0.
  void startLinesNameBothLimits() {
    QCOMPARE(
        QString::fromStdString(machine_limits_lines(181e9, "measured: 2048³ fp32 GEMM, 2 threads", 11.2e9,
                                                    "kept from earlier measurements: copies of 65.5 kB to 268 MB")),
        QString("matmul limit: 181 GFLOP/s (measured: 2048³ fp32 GEMM, 2 threads), MFU's peak\n"
                "memory limit: 11.2 GB/s from memory (kept from earlier measurements: copies of 65.5 kB to "
                "268 MB)\n"));
    QCOMPARE(QString::fromStdString(machine_limits_lines(-1, "", -1, "")),
             QString("matmul limit: unknown (no MFU)\nmemory limit: unknown\n"));
  }

  // The matmul work's check line: the shapes' count beside the profiler's, with the ratio; none counted is said.
  void matmulWorkIsCheckedAgainstTheProfiler() {
    QCOMPARE(QString::fromStdString(matmul_work_check(1.234e9, 1.222e9)),
             QString("  matmul work: 1.23 GFLOP a step from the model's shapes, 1.22 GFLOP by the profiler's count of "
                     "its GEMM calls (99.0%)\n"));
    QCOMPARE(QString::fromStdString(matmul_work_check(5.6e12, 0)),
             QString("  matmul work: 5.60 TFLOP a step from the model's shapes, none counted by the profiler (it saw "
                     "no GEMM calls)\n"));
  }

  // The bandwidth cache keeps one rate per working set, 64 KiB ×4 up to the largest; a start's cheap measurement
  // fills the smallest and the largest and leaves nulls between, which a full measurement fills in later.
  void bandwidthCacheEntriesReadBack() {
    const std::vector<double> sets = bandwidth_working_sets(kBandwidthMaxBytesCpu);
    QCOMPARE(sets.size(), size_t{7});  // 64 KiB, 256 KiB, 1, 4, 16, 64 and 256 MiB
    QCOMPARE(sets.front(), kBandwidthMinBytes);
    QCOMPARE(sets.back(), kBandwidthMaxBytesCpu);
    QCOMPARE(bandwidth_working_sets(kBandwidthMaxBytesCuda).back(), kBandwidthMaxBytesCuda);
    const nlohmann::json cheap = {75e9, nullptr, nullptr, nullptr, nullptr, nullptr, 11e9};
    const std::optional<MemoryBandwidth> kept = bandwidth_from_cache_entry(cheap, kBandwidthMaxBytesCpu);
    QVERIFY(kept.has_value());
    QCOMPARE(kept->rates.size(), size_t{2});
    QCOMPARE(kept->rates[0].working_set, kBandwidthMinBytes);
    QCOMPARE(kept->dram(), 11e9);
    QCOMPARE(kept->rate_for(1e6), 75e9);  // between the two sets: the smaller set's rate, never understated
    const nlohmann::json full = {75e9, 70e9, 40e9, 30e9, 15e9, 12e9, 11e9};
    QCOMPARE(bandwidth_from_cache_entry(full, kBandwidthMaxBytesCpu)->rates.size(), size_t{7});
    // Not this layout, or without the largest set's rate (what the start line states): not a kept limit.
    QVERIFY(!bandwidth_from_cache_entry(full, kBandwidthMaxBytesCuda));
    QVERIFY(!bandwidth_from_cache_entry({75e9, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr},
                                        kBandwidthMaxBytesCpu));
    QVERIFY(!bandwidth_from_cache_entry(nlohmann::json::object(), kBandwidthMaxBytesCpu));
    QVERIFY(!bandwidth_from_cache_entry(nlohmann::json(11e9), kBandwidthMaxBytesCpu));
  }
};

QTEST_GUILESS_MAIN(TestSpeedOfLight)
#include "test_speed_of_light.moc"
