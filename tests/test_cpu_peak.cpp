// The CPU's measured GEMM peak (engine/torch/device/cpu_peak.h): the product's side is sized within its bounds (so a
// bf16 measurement on a CPU without native bf16 cannot run a 2048³ product for minutes), the rate is a real
// positive number, and cpu_peak_flops keeps the best rate per CPU, precision and thread count in the cache.
#include <ATen/Parallel.h>

#include <QtTest>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/base/util/files.h"
#include "engine/torch/device/cpu_peak.h"
#include "tests/support/scratch_env.h"

using namespace tokamak;

class TestCpuPeak : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void sizeStaysWithinItsBounds_data() {
    QTest::addColumn<QString>("precision");
    QTest::newRow("fp32") << "fp32";
    QTest::newRow("bf16") << "bf16";
  }
  void sizeStaysWithinItsBounds() {
    QFETCH(QString, precision);
    at::set_num_threads(1);
    // A cap below the starting side is the side.
    GemmRate r = measure_cpu_gemm_flops(precision.toStdString(), 64, 1);
    QCOMPARE(r.size, 64);
    QVERIFY2(std::isfinite(r.flops) && r.flops > 0, qPrintable(QString::number(r.flops)));
    // The cap at the starting side: no doubling past it.
    r = measure_cpu_gemm_flops(precision.toStdString(), kCpuPeakMinSize, 1);
    QCOMPARE(r.size, kCpuPeakMinSize);
    // Room to double once: the start or its double, never more.
    r = measure_cpu_gemm_flops(precision.toStdString(), 2 * kCpuPeakMinSize, 1);
    QVERIFY2(r.size == kCpuPeakMinSize || r.size == 2 * kCpuPeakMinSize, qPrintable(QString::number(r.size)));
    QVERIFY(r.flops > 0);
  }

  void theBestRateIsCachedPerPrecisionAndThreads() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    at::set_num_threads(1);
    const CpuPeak first = cpu_peak_flops("bf16");
    QVERIFY(first.flops > 0);
    QVERIFY2(first.source.find("³ bf16 GEMM, 1 thread") != std::string::npos, first.source.c_str());
    const nlohmann::json cache = nlohmann::json::parse(read_file(cache_dir() + "/cpu_peak.json"));
    QCOMPARE(cache.size(), size_t{1});
    const std::string key = cache.begin().key();
    QVERIFY2(key.find("|bf16|1|") != std::string::npos, key.c_str());
    QCOMPARE(cache.begin().value().get<double>(), first.flops);
    // Measured again: the answer is never below the kept best, and the cache keeps the higher one.
    const CpuPeak second = cpu_peak_flops("bf16-pure");
    QVERIFY(second.flops >= first.flops);
    const nlohmann::json again = nlohmann::json::parse(read_file(cache_dir() + "/cpu_peak.json"));
    QCOMPARE(again.size(), size_t{1});
    QCOMPARE(again[key].get<double>(), second.flops);
    // Another precision is another entry.
    QVERIFY(cpu_peak_flops("fp32").flops > 0);
    QCOMPARE(nlohmann::json::parse(read_file(cache_dir() + "/cpu_peak.json")).size(), size_t{2});
  }
};

QTEST_GUILESS_MAIN(TestCpuPeak)
#include "test_cpu_peak.moc"
