// The one formatter for bytes and counts (engine/base/util/format.h) that the CLI, the studio, the scoreboards and
// the errors share: three significant digits, decimal units, the unit chosen after rounding, NaN as "-".
#include <QtTest>

#include <cmath>
#include <limits>

#include "engine/base/util/format.h"

using namespace tokamak;

class TestFormat : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void bytes_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("text");
    QTest::newRow("bytes") << 12.0 << "12 B";
    QTest::newRow("just under a kB") << 999.0 << "999 B";
    QTest::newRow("kB") << 2048.0 << "2.05 kB";
    QTest::newRow("Hub's shortfall") << 201000.0 << "201 kB";
    QTest::newRow("rounds up into MB") << 999600.0 << "1 MB";
    QTest::newRow("stays in kB") << 999400.0 << "999 kB";
    QTest::newRow("MB") << 427819008.0 << "428 MB";
    QTest::newRow("a round GB") << 1e9 << "1 GB";
    QTest::newRow("1.5 GiB") << 1536.0 * 1024 * 1024 << "1.61 GB";
    QTest::newRow("GB") << 5133828096.0 << "5.13 GB";
    QTest::newRow("TB") << 54126420000000.0 << "54.1 TB";
    QTest::newRow("past the last unit") << 9.2e18 << "9200 PB";
    QTest::newRow("negative") << -2048.0 << "-2.05 kB";
    QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN() << "-";
  }
  void bytes() {
    QFETCH(double, value);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(format_bytes(value)), text);
  }

  void counts_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("text");
    QTest::newRow("small") << 950.0 << "950";
    QTest::newRow("fraction") << 12.4 << "12";
    QTest::newRow("write-up's baseline") << 12500.0 << "12.5K";
    QTest::newRow("write-up's best") << 142000.0 << "142K";
    QTest::newRow("median tok/s") << 10017.0 << "10K";
    QTest::newRow("rounds up into M") << 999999.0 << "1M";
    QTest::newRow("GPT-2's parameters") << 124439808.0 << "124M";
    QTest::newRow("GPT-2 XL's parameters") << 1557611200.0 << "1.56B";
    QTest::newRow("T") << 3.05e12 << "3.05T";
    QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN() << "-";
  }
  void counts() {
    QFETCH(double, value);
    QFETCH(QString, text);
    QCOMPARE(QString::fromStdString(format_count(value)), text);
  }
};

QTEST_GUILESS_MAIN(TestFormat)
#include "test_format.moc"
