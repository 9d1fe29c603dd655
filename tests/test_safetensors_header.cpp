// The safetensors header parser (engine/base/util/safetensors.h) checks every length, shape and offset against
// the bytes there are before it trusts one: each damaged header is one line naming what is wrong. Bytes made
// here, no model; checkpoints written by a model are test_checkpoint's.
#include <QtTest>

#include <string>

#include "engine/base/util/safetensors.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using tokamak::test::error_of;

class TestSafetensorsHeader : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void headerParserChecksBoundsFirst_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("expected");
    auto with_header = [](const std::string& json, size_t data_bytes) {
      std::string f(8, '\0');
      for (int i = 0; i < 8; ++i) f[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
      return QByteArray::fromStdString(f + json + std::string(data_bytes, '\0'));
    };
    QTest::newRow("huge length") << QByteArray("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10) << "implausible";
    QTest::newRow("length past end") << with_header("{}", 0).left(9) << "runs past the end";
    QTest::newRow("not json") << with_header("{\"a\":", 0) << "not valid JSON";
    QTest::newRow("unknown dtype") << with_header(R"({"a":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}})", 1)
                                   << "unknown dtype 'F7'";
    QTest::newRow("negative shape") << with_header(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)
                                    << "shape that is not sizes";
    QTest::newRow("overflowing shape")
        << with_header(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4)
        << "too large";
    QTest::newRow("bytes do not fit shape")
        << with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", 8)
        << "has 4 bytes but its shape needs 8";
    QTest::newRow("past the data") << with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4)
                                   << "outside the file";
    QTest::newRow("overlap")
        << with_header(
               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
               8)
        << "overlap";
    QTest::newRow("metadata not strings") << with_header(R"({"__metadata__":{"k":1}})", 0) << "not a string";
  }

  void headerParserChecksBoundsFirst() {
    QFETCH(QByteArray, file);
    QFETCH(QString, expected);
    const QString e = error_of([&] { parse_safetensors_header(file.constData(), static_cast<size_t>(file.size())); });
    QVERIFY2(e.contains(expected), qPrintable(e));
    QVERIFY(!e.contains('\n'));
  }
};

QTEST_GUILESS_MAIN(TestSafetensorsHeader)
#include "test_safetensors_header.moc"
