// The studio's work on a host's run beyond training, against a real SSH host (Debian's sshd on loopback,
// tests/support/sshd_server.h): the dataset picker lists what the host has (from "Test connection") and
// leaves the host's paths unchecked here; "Sample now" on a live host run makes the run sample; on the runs
// page, "Download checkpoint" copies the host's newest checkpoint with progress, "Evaluate" runs there and
// records its results here, "Export" writes a Hugging Face folder there and brings it back.
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/studio_host.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/common/child_process.h"
#include "ui/remote/where_box.h"
#include "ui/live/run_controller.h"
#include "ui/history/runs_panel.h"
#include "ui/samples/samples_panel.h"
#include "ui/setup/dataset_box.h"
#include "ui/setup/setup_panel.h"

using namespace tokamak;
using namespace tokamak::ui;

class TestStudioHostOps : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SshHost> ssh_;
  std::string hostData_, data_;

  void chooseHost(MainWindow& w) { test::choose_host(w, "tokamak-test", test::tokamak_bin()); }
  // Over the studio's own shared connection, as its `tokamak remote` reaches the host.
  RemoteHost host() const { return ssh_->by_alias(test::tokamak_bin().toStdString()); }
  QStringList problems(MainWindow& w) {
    QStringList out;
    auto* list = w.setupPanel()->findChild<QListWidget*>("problems");
    for (int i = 0; i < list->count(); ++i) out << list->item(i)->text();
    return out;
  }

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    data_ = env_->corpus_excerpt(20000);
    // The host keeps its dataset cache apart from this side's, so what it lists is its own.
    const QString cache = QString::fromStdString(env_->path("host-data") + "/dataset-cache");
    ssh_ = std::make_unique<test::SshHost>(*env_, QStringList{"TOKAMAK_DATASETS=" + cache}, "tokamak-test");
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    hostData_ = ssh_->data();
  }

  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  void pickerListsTheHostsDatasets() {
    // Shards prepared on the host, in its data folder's datasets/: the host's path, listed by the host.
    const std::string shards = hostData_ + "/tokamak/datasets/hostshards";
    make_dirs(hostData_ + "/tokamak/datasets");
    host().run({test::tokamak_bin().toStdString(), "tokenize", "--prepare", data_, "--out", shards}, {}, 120);
    MainWindow w;
    DatasetBox* box = w.setupPanel()->datasetBox();
    auto* picker = box->findChild<QComboBox*>("hostDatasets");
    QVERIFY(picker->isHidden());  // this computer: nothing to list
    chooseHost(w);
    QVERIFY(!picker->isHidden());
    QSignalSpy tested(w.setupPanel()->whereBox(), &WhereBox::tested);
    w.setupPanel()->whereBox()->findChild<QPushButton*>("testConnection")->click();
    QVERIFY(tested.wait(60000));
    QVERIFY2(tested.first().first().toBool(), qPrintable(w.setupPanel()->whereBox()->resultText()));
    QVERIFY2(w.setupPanel()->whereBox()->resultText().contains(" dataset(s)"),
             qPrintable(w.setupPanel()->whereBox()->resultText()));
    const int at = picker->findData(QString::fromStdString(shards));
    QVERIFY2(at > 0, qPrintable(picker->itemText(0)));
    QVERIFY2(picker->itemText(at).startsWith("hostshards — ") && picker->itemText(at).contains(" tokens"),
             qPrintable(picker->itemText(at)));
    QVERIFY(picker->findData("default") > 0);
    picker->setCurrentIndex(at);
    Q_EMIT picker->activated(at);
    QCOMPARE(QString::fromStdString(w.setupPanel()->config().data.path), QString::fromStdString(shards));
    // A host's path is the host's: not checked on this computer.
    box->setPath("/only/on/the/host/shards");
    QTRY_VERIFY_WITH_TIMEOUT(!problems(w).join('\n').contains("does not exist"), test::kPatienceMs);
    w.setupPanel()->whereBox()->findChild<QComboBox*>("where")->setCurrentIndex(0);  // this computer
    QVERIFY(picker->isHidden());
    QTRY_VERIFY2(problems(w).join('\n').contains("'/only/on/the/host/shards' does not exist"),
                 qPrintable(problems(w).join('\n')));
  }

  void hostRunSamplesDownloadsEvaluatesExports() {
    Config c;
    apply_overrides(
        c, test::quiet_run_overrides(data_, 400, {"checkpoint.every=100", "speed.precision=fp32", "name=host-ops"}));
    MainWindow w;
    chooseHost(w);
    w.setupPanel()->setConfig(c);
    RunController* rc = w.runController();
    w.startAction()->trigger();
    QVERIFY(rc->isRemote());
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step >= 3, 120000);
    // "Sample now" asks the run there (sample.every=-1: the run itself never samples).
    auto* sampleNow = w.samplesPanel()->findChild<QPushButton*>("sampleNow");
    QVERIFY(sampleNow->isEnabled());
    sampleNow->click();
    QTRY_VERIFY_WITH_TIMEOUT(w.samplesPanel()->sampleCount() == 1, 60000);
    QVERIFY(!rc->hasEnded());
    QTRY_VERIFY_WITH_TIMEOUT(rc->hasEnded(), 300000);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("finished"));
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), 30000);
    QCOMPARE(w.samplesPanel()->sampleCount(), 1);

    const std::string uid = rc->runStart().run_uid;
    RunStore store;
    const int64_t id = store.find_uid(uid);
    QVERIFY(id > 0);
    QCOMPARE(int(store.samples(id).size()), 1);
    const std::vector<RemoteCheckpoint> there = host().checkpoints(uid);
    QVERIFY(!there.empty());
    QCOMPARE(there.back().step, int64_t(400));

    RunsPanel* runs = w.runsPanel();
    auto* job = runs->findChild<ChildProcess*>("hostJob");
    QVERIFY(job);
    QSignalSpy progress(job, &ChildProcess::progress);
    const QString to = QString::fromStdString(env_->path("downloads"));
    QVERIFY(runs->downloadCheckpoint(id, to));
    QTRY_VERIFY_WITH_TIMEOUT(!runs->isDownloading(), 120000);
    QVERIFY2(!runs->hasError() && runs->message().contains("sha256 verified"), qPrintable(runs->message()));
    QVERIFY(progress.size() >= 2);
    QCOMPARE(progress.last().at(1).toLongLong(), progress.last().at(2).toLongLong());  // 100%
    QVERIFY(read_file(to.toStdString() + "/step_400.safetensors") == read_file(there.back().path));

    // Evaluate: `tokamak eval` there (the dataset path is the host's), the results recorded here.
    QVERIFY(runs->evaluateRun(id, QString::fromStdString("ppl:" + data_)));
    QTRY_VERIFY_WITH_TIMEOUT(!runs->isDownloading(), 120000);
    QVERIFY2(!runs->hasError() && runs->message().contains("ppl "), qPrintable(runs->message()));
    bool recorded = false;
    for (const MetricRow& row : store.metrics(id))
      recorded = recorded || (row.step == 400 && row["eval/ppl/excerpt/ppl"] > 1);
    QVERIFY(recorded);

    // Export: written on the host, then copied here, file for file.
    const std::string out = hostData_ + "/hf-export";
    QVERIFY(runs->exportOnHost(id, QString::fromStdString(out), to));
    QTRY_VERIFY_WITH_TIMEOUT(runs->message().startsWith("Downloaded") || runs->hasError(), 120000);
    QVERIFY2(!runs->hasError(), qPrintable(runs->message()));
    const QStringList files = QDir(QString::fromStdString(out)).entryList(QDir::Files);
    QVERIFY(files.contains("config.json") && files.contains("model.safetensors"));
    for (const QString& f : files)
      QVERIFY2(read_file(to.toStdString() + "/hf-export/" + f.toStdString()) == read_file(out + "/" + f.toStdString()),
               qPrintable(f));

    // GGUF: written on the host by its tokamak, then copied here byte for byte.
    const std::string gguf = hostData_ + "/model-q8.gguf";
    QVERIFY(runs->exportOnHost(id, QString::fromStdString(gguf), to, "gguf", "q8_0"));
    QTRY_VERIFY_WITH_TIMEOUT(runs->message().startsWith("Downloaded") || runs->hasError(), 120000);
    QVERIFY2(!runs->hasError(), qPrintable(runs->message()));
    const std::string here = read_file(to.toStdString() + "/model-q8.gguf");
    QVERIFY(here == read_file(gguf));
    QCOMPARE(QByteArray::fromStdString(here.substr(0, 4)), QByteArray("GGUF"));
  }
};

QTEST_MAIN(TestStudioHostOps)
#include "test_studio_host_ops.moc"
