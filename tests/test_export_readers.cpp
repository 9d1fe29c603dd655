// Run histories where people already look, read back by the tools' own code: a run trained by `tokamak train` (its
// per-layer statistics and samples included) exported with `tokamak runs export --format tensorboard` is read by
// TensorBoard's EventAccumulator, and logged with `--to mlflow URL` to a real `mlflow server` on loopback is read by
// MLflow's client. Every stored point comes back: TensorBoard's as the float32 nearest the stored value (its scalars
// are float32), MLflow's exactly, with its step and time; the config and samples as text or artifacts.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/base/run/layer_metrics.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using json = nlohmann::json;

namespace {

// A reference script's JSON; null when its package is missing (exit 3).
json reader(const std::string& script, const std::string& args) {
  std::string out;
  const int code = test::run(test::python() + " " TOKAMAK_SOURCE_DIR "/tests/reference/" + script + " " + args, &out);
  if (code == 3) return nullptr;
  if (code != 0) throw std::runtime_error(script + " failed (exit " + std::to_string(code) + ")");
  return json::parse(out);
}

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

class TestExportReaders : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::string db_;
  RunInfo run_;
  std::vector<MetricRow> rows_;
  std::vector<SampleRow> samples_;

  int64_t points() const {
    int64_t n = 0;
    for (const MetricRow& r : rows_) n += static_cast<int64_t>(r.values.size());
    return n;
  }

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    db_ = env_->path("runs.db");
    const auto trained = test::run_tokamak(
        QStringList{"train", "--db", q(db_)} +
        test::set_args(test::quiet_run_overrides(
            env_->corpus_excerpt(30000), 6,
            {"metrics.layers_every=0", "sample.every=3", "sample.tokens=8", "model.n_layer=2", "name=export-me"})));
    QVERIFY2(trained.code == 0, qPrintable(trained.err_text()));
    RunStore store(db_, RunStore::Mode::existing);
    run_ = store.run(1);
    rows_ = store.metrics(1);
    samples_ = store.samples(1);
    QCOMPARE(rows_.size(), size_t{6});
    QCOMPARE(samples_.size(), size_t{2});
    size_t layers = 0;
    for (const MetricValue& v : rows_.back().values) layers += is_layer_metric(v.key);
    QVERIFY2(layers >= 20, qPrintable(QString::number(layers)));  // 2 blocks: 8 groups × 3 + 2 × 2
  }

  void tensorboardReadsEveryPoint() {
    const std::string logs = env_->path("tb");
    const auto r = test::run_tokamak({"runs", "export", "--db", q(db_), "--format", "tensorboard", "--out", q(logs)});
    QVERIFY2(r.code == 0, qPrintable(r.err_text()));
    QVERIFY2(r.err_text().contains("tensorboard --logdir"), qPrintable(r.err_text()));
    const std::string folder = logs + "/export-me-" + run_.uid.substr(0, 8);
    QVERIFY2(is_directory(folder), folder.c_str());
    const json tb = reader("tensorboard_reader.py", folder);
    if (tb.is_null()) QSKIP("tensorboard is not in the set-up's venv: run TOKAMAK_READERS=ON scripts/setup.sh");
    int64_t matched = 0;
    for (const MetricRow& row : rows_)
      for (const MetricValue& v : row.values) {
        const std::string tag = is_layer_metric(v.key) ? "layers/" + parse_layer_metric(v.key)->stat + "/" +
                                                             parse_layer_metric(v.key)->group
                                                       : v.key;
        QVERIFY2(tb["scalars"].contains(tag), tag.c_str());
        bool found = false;
        for (const json& p : tb["scalars"][tag])
          if (p[0].get<int64_t>() == row.step) {
            found = true;
            QCOMPARE(p[2].get<double>(), static_cast<double>(static_cast<float>(v.value)));  // float32, exactly
            QCOMPARE(p[1].get<double>(), run_.created + row["wall_s"]);
          }
        QVERIFY2(found, qPrintable(q(tag) + " at " + QString::number(row.step)));
        ++matched;
      }
    QCOMPARE(matched, points());
    int64_t read = 0;
    for (const auto& [tag, series] : tb["scalars"].items()) read += static_cast<int64_t>(series.size());
    QCOMPARE(read, points());  // nothing more than the store holds
    QCOMPARE(tb["texts"]["config"].size(), size_t{1});
    QVERIFY(q(tb["texts"]["config"][0][1].get<std::string>()).contains("\"layers_every\": 0"));
    QCOMPARE(tb["texts"]["samples"].size(), samples_.size());
    for (size_t i = 0; i < samples_.size(); ++i) {
      QCOMPARE(tb["texts"]["samples"][i][0].get<int64_t>(), samples_[i].step);
      QVERIFY(q(tb["texts"]["samples"][i][1].get<std::string>()).contains(q(samples_[i].text)));
    }
    // Again: the folder holds an earlier export, replaced only with --force; the store itself never.
    const auto again =
        test::run_tokamak({"runs", "export", "--db", q(db_), "--format", "tensorboard", "--out", q(logs)});
    QCOMPARE(again.code, 1);
    QVERIFY2(again.errors().size() == 1 && again.errors()[0].contains("--force"), qPrintable(again.err_text()));
    QCOMPARE(
        test::run_tokamak({"runs", "export", "--db", q(db_), "--format", "tensorboard", "--out", q(logs), "--force"})
            .code,
        0);
    const auto store =
        test::run_tokamak({"runs", "export", "--db", q(db_), "--format", "tensorboard", "--out", q(db_)});
    QCOMPARE(store.code, 1);
    QVERIFY2(store.errors().size() == 1, qPrintable(store.err_text()));
    QVERIFY(QFileInfo(q(db_)).isFile());
  }

  void mlflowServerReadsEveryPoint() {
    if (test::run(test::python() + " -c 'import mlflow' 2>/dev/null") != 0)
      QSKIP("mlflow is not in the set-up's venv: run TOKAMAK_READERS=ON scripts/setup.sh");
    QTemporaryDir home;
    const int port = test::free_port();
    QProcess server;
    server.setWorkingDirectory(home.path());
    server.setProcessChannelMode(QProcess::MergedChannels);
    server.setStandardOutputFile(home.filePath("server.log"));
    const QString mlflow = QFileInfo(q(test::python())).dir().filePath("mlflow");
    server.start(mlflow, {"server", "--host", "127.0.0.1", "--port", QString::number(port), "--workers", "1",
                          "--backend-store-uri", "sqlite:///" + home.filePath("mlflow.db"), "--artifacts-destination",
                          home.filePath("artifacts")});
    QVERIFY2(server.waitForStarted(), qPrintable(server.errorString()));
    const std::string url = "http://127.0.0.1:" + std::to_string(port);
    bool up = false;
    for (int i = 0; i < 240 && !up; ++i) {  // a first start creates its database: seconds on a busy machine
      up = test::run("curl -sf " + url + "/health >/dev/null 2>&1") == 0;
      if (!up) QTest::qWait(500);
    }
    QVERIFY2(up, qPrintable(QString::fromStdString(read_file(home.filePath("server.log").toStdString())).right(2000)));

    const auto r =
        test::run_tokamak({"runs", "export", "--db", q(db_), "--to", "mlflow", q(url), "--experiment", "tk"});
    QVERIFY2(r.code == 0, qPrintable(r.err_text()));
    const json runs = reader("mlflow_reader.py", url + " tk");
    QCOMPARE(runs.size(), size_t{1});
    const json& m = runs[0];
    QCOMPARE(q(m["run_id"].get<std::string>()), r.out_text().trimmed());
    QCOMPARE(m["name"].get<std::string>(), run_.name);
    QCOMPARE(m["status"].get<std::string>(), std::string("FINISHED"));
    QCOMPARE(m["tags"]["tokamak.run_uid"].get<std::string>(), run_.uid);
    QCOMPARE(m["start_time"].get<int64_t>(), static_cast<int64_t>(std::llround(run_.created * 1000)));
    QCOMPARE(m["params"]["train.steps"].get<std::string>(), std::string("6"));
    QCOMPARE(m["params"]["metrics.layers_every"].get<std::string>(), std::string("0"));
    int64_t matched = 0, read = 0;
    for (const auto& [key, history] : m["metrics"].items()) read += static_cast<int64_t>(history.size());
    for (const MetricRow& row : rows_)
      for (const MetricValue& v : row.values) {
        QVERIFY2(m["metrics"].contains(v.key), v.key.c_str());
        for (const json& p : m["metrics"][v.key])
          if (p[0].get<int64_t>() == row.step) {
            QCOMPARE(p[2].get<double>(), v.value);  // exactly
            QCOMPARE(p[1].get<int64_t>(), static_cast<int64_t>(std::llround((run_.created + row["wall_s"]) * 1000)));
            ++matched;
          }
      }
    QCOMPARE(matched, points());
    QCOMPARE(read, points());
    QVERIFY(q(m["artifacts"]["config.json"].get<std::string>()).contains("\"layers_every\": 0"));
    const json samples = json::parse(m["artifacts"]["samples.json"].get<std::string>());
    QCOMPARE(samples.size(), samples_.size());
    QCOMPARE(samples[1]["text"].get<std::string>(), samples_[1].text);

    // The same run again: refused in one line, nothing sent; --force logs it as a second MLflow run.
    const auto again =
        test::run_tokamak({"runs", "export", "--db", q(db_), "--to", "mlflow", q(url), "--experiment", "tk"});
    QCOMPARE(again.code, 1);
    QVERIFY2(again.errors().size() == 1 && again.errors()[0].contains("already in MLflow"),
             qPrintable(again.err_text()));
    QCOMPARE(reader("mlflow_reader.py", url + " tk").size(), size_t{1});
    QCOMPARE(
        test::run_tokamak({"runs", "export", "--db", q(db_), "--to", "mlflow", q(url), "--experiment", "tk", "--force"})
            .code,
        0);
    QCOMPARE(reader("mlflow_reader.py", url + " tk").size(), size_t{2});

    server.terminate();
    server.waitForFinished(10000);
    // Nobody there: one line naming the server, no path or query shown.
    const auto gone =
        test::run_tokamak({"runs", "export", "--db", q(db_), "--to", "mlflow", q(url + "/x?token=SECRET")});
    QCOMPARE(gone.code, 1);
    QVERIFY2(gone.errors().size() == 1 && gone.errors()[0].contains("was not reached") &&
                 !gone.err_text().contains("SECRET"),
             qPrintable(gone.err_text()));
  }

  void badDestinationsAreOneLine() {
    for (const QStringList& args :
         {QStringList{"--to", "mlflow", "file:///tmp/x"}, QStringList{"--to", "wandb", "http://x"},
          QStringList{"--format", "tensorboard"}, QStringList{}}) {
      const auto r = test::run_tokamak(QStringList{"runs", "export", "--db", q(db_)} + args);
      QVERIFY2(r.code != 0 && !r.err_text().trimmed().isEmpty() && !r.err_text().trimmed().contains('\n'),
               qPrintable(args.join(' ') + ": " + r.err_text()));
    }
  }
};

QTEST_GUILESS_MAIN(TestExportReaders)
#include "test_export_readers.moc"
