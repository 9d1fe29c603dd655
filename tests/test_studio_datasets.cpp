// The dataset picker's Hub catalog and its Get… against a real HTTP server (Debian's nginx laid out as the
// Hugging Face Hub, tests/support/nginx_server.h), with the real `tokamak datasets get` as the download: the
// catalog says absent, then "2 of 103 shards here" once Get… has fetched them, progress is shown on the way,
// and choosing the entry makes its folder the config's data.path. A download outlives the window that
// started it (a second window follows it), is cancelled with its .part kept, and a second Get… resumes it
// with a Range request. Assertions are on states, bytes and the server's access log, never on time.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QtTest>

#include <memory>
#include <signal.h>

#include "engine/base/config/config.h"
#include "tests/support/nginx_server.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "ui/setup/dataset_box.h"
#include "ui/setup/dataset_catalog.h"
#include "ui/setup/dataset_get.h"
#include "ui/setup/setup_panel.h"

using namespace tokamak;
using namespace tokamak::ui;
using test::kPatienceMs;
using test::llmc_shard;

namespace {

const std::string kRepo = "kjj0/fineweb10B-gpt2";

QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// What the catalog list shows for NAME ("" while it is not listed).
QString shown(DatasetCatalog* c, const QString& name) {
  auto* list = c->findChild<QComboBox*>("datasetCatalog");
  const int i = list->findData(name);
  return i < 0 ? QString() : list->itemText(i);
}

// Ends every download a test left going (they are detached: nothing else would).
void killDownloads() {
  for (const QString& f : QDir(DatasetGet::folder()).entryList({"*.pid"}, QDir::Files)) {
    const qint64 pid = contents(DatasetGet::folder() + "/" + f).trimmed().split(' ').value(0).toLongLong();
    if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
  }
}

}  // namespace

class TestStudioDatasets : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;  // XDG_DATA_HOME: the downloads land in a scratch folder

 private Q_SLOTS:
  void init() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
  }
  void cleanup() {
    killDownloads();
    env_.reset();
  }

  void getShowsProgressAndTheDatasetBecomesData() {
    test::NginxServer hub;
    const QByteArray val = llmc_shard(20000, 1), train[2] = {llmc_shard(30000, 2), llmc_shard(30000, 3)};
    hub.addFile(kRepo, "fineweb_val_000000.bin", val, {true, true, {}});  // through a redirect, as the Hub does
    hub.addFile(kRepo, "fineweb_train_000001.bin", train[0]);
    hub.addFile(kRepo, "fineweb_train_000002.bin", train[1]);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());

    SetupPanel panel;
    DatasetCatalog* catalog = panel.datasetBox()->catalog();
    DatasetGet* get = catalog->downloads();
    QTRY_VERIFY_WITH_TIMEOUT(get->entry("fineweb10B"), kPatienceMs);
    QVERIFY2(shown(catalog, "fineweb10B").contains("absent"), qPrintable(shown(catalog, "fineweb10B")));
    QCOMPARE(get->catalog().size(), 3);

    QList<DownloadState> progress;
    connect(get, &DatasetGet::progressed, this, [&](const QString&, const DownloadState& s) { progress << s; });
    QSignalSpy finished(get, &DatasetGet::finished);
    QCOMPARE(catalog->getShards("fineweb10B", 2), QString());
    QCOMPARE(catalog->currentName(), QString("fineweb10B"));
    QVERIFY(get->isGetting("fineweb10B"));
    QVERIFY(!catalog->findChild<QPushButton*>("cancelGet")->isHidden());
    QVERIFY(!catalog->findChild<QPushButton*>("getDataset")->isEnabled());  // one download of it at a time
    QVERIFY(catalog->findChild<QLabel*>("getStatus")->text().startsWith("fetching fineweb10B"));

    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kPatienceMs);
    QCOMPARE(finished[0][0].toString(), QString("fineweb10B"));
    QCOMPARE(finished[0][1].toString(), QString());
    QVERIFY(!progress.isEmpty());
    const qint64 all = val.size() + train[0].size() + train[1].size();
    QCOMPARE(progress.last().total, all);
    QVERIFY(progress.last().text().contains("files"));
    QVERIFY(catalog->findChild<QPushButton*>("cancelGet")->isHidden());

    // The catalog is listed again and says what is here; the files are the served bytes.
    QTRY_VERIFY_WITH_TIMEOUT(shown(catalog, "fineweb10B").contains("2 of 103 shards here"), kPatienceMs);
    const CatalogEntry* e = get->entry("fineweb10B");
    QVERIFY(e->valPresent && e->trainPresent == 2 && e->bytesPresent == all);
    QCOMPARE(contents(e->path + "/fineweb_val_000000.bin"), val);
    QCOMPARE(contents(e->path + "/fineweb_train_000002.bin"), train[1]);
    QVERIFY(!QFile::exists(DatasetGet::folder() + "/fineweb10B.pid"));

    // Choosing it makes its folder the run's data.
    auto* list = catalog->findChild<QComboBox*>("datasetCatalog");
    const int row = list->findData("fineweb10B");
    list->setCurrentIndex(row);
    Q_EMIT list->activated(row);
    QCOMPARE(QString::fromStdString(panel.config().data.path), e->path);
    QVERIFY2(panel.datasetBox()->problem().isEmpty(), qPrintable(panel.datasetBox()->problem()));
  }

  // The download's pid file held a pid alone: after a reboot (or a wrap of pids) another process can have it,
  // and the next studio adopted that one and Cancel signalled it. The file now names the process by its start
  // time too, as run folders do; a file that names another process (or none, an older studio's) is let go.
  void aPidFileOfAnotherProcessIsNotAdopted() {
    QProcess other;  // unrelated to any download, with the pid the file names
    other.start("sleep", {"600"});
    QVERIFY(other.waitForStarted());
    QVERIFY(QDir().mkpath(DatasetGet::folder()));
    const QString pidFile = DatasetGet::folder() + "/fineweb10B.pid";
    const QByteArray pid = QByteArray::number(other.processId());
    for (const QByteArray& text : {pid + "\n", pid + " 1\n"}) {  // an older studio's file; another start time
      QFile f(pidFile);
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write(text) == text.size());
      f.close();
      DatasetGet get;
      QVERIFY2(!get.isGetting("fineweb10B"), text.constData());
      get.cancel("fineweb10B");
      QVERIFY(!QFile::exists(pidFile));
    }
    QCOMPARE(other.state(), QProcess::Running);  // never signalled
    other.kill();
    other.waitForFinished();
  }

  void downloadOutlivesTheWindowIsCancelledAndResumes() {
    test::NginxServer hub;
    const QByteArray val = llmc_shard(60000, 7), train = llmc_shard(2000, 8);  // 120 KB at 16 KB/s: seconds
    hub.addRepo(kRepo, {"16k", "", true});
    hub.addFile(kRepo, "fineweb_val_000000.bin", val);
    hub.addFile(kRepo, "fineweb_train_000001.bin", train);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());

    auto first = std::make_unique<DatasetBox>();
    QTRY_VERIFY_WITH_TIMEOUT(first->catalog()->downloads()->entry("fineweb10B"), kPatienceMs);
    const QString dir = first->catalog()->downloads()->entry("fineweb10B")->path;
    const QString part = dir + "/.fineweb_val_000000.bin.part";
    QCOMPARE(first->catalog()->getShards("fineweb10B", 1), QString());
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(part).size() > 0, kPatienceMs);

    // The studio closes; the download goes on and the next studio follows it.
    first.reset();
    const qint64 before = QFileInfo(part).size();
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(part).size() > before, kPatienceMs);
    DatasetBox second;
    DatasetCatalog* catalog = second.catalog();
    QVERIFY(catalog->downloads()->isGetting("fineweb10B"));
    QTRY_COMPARE_WITH_TIMEOUT(catalog->currentName(), QString("fineweb10B"), kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(catalog->findChild<QLabel*>("getStatus")->text().contains("MB/s"), kPatienceMs);

    // Cancel: the process ends, what came stays as a .part, nothing is in place.
    QSignalSpy finished(catalog->downloads(), &DatasetGet::finished);
    catalog->cancelGet();
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kPatienceMs);
    QCOMPARE(finished[0][1].toString(), QString("cancelled"));
    const qint64 kept = QFileInfo(part).size();
    QVERIFY2(kept > 0 && kept < val.size(), qPrintable(QString::number(kept)));
    QVERIFY(!QFile::exists(dir + "/fineweb_val_000000.bin"));
    QTRY_VERIFY_WITH_TIMEOUT(shown(catalog, "fineweb10B").contains("1 partial"), kPatienceMs);

    // A second Get… asks only for the rest.
    QVERIFY(catalog->findChild<QPushButton*>("getDataset")->isEnabled());
    QCOMPARE(catalog->getShards("fineweb10B", 1), QString());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 2, kPatienceMs);
    QCOMPARE(finished[1][1].toString(), QString());
    QCOMPARE(contents(dir + "/fineweb_val_000000.bin"), val);
    QVERIFY(!QFile::exists(part));
    const QStringList ranged = hub.requests().filter("fineweb_val_000000.bin 206 bytes=");
    QVERIFY2(ranged.size() == 1, qPrintable(hub.requests().join('\n')));
    QTRY_VERIFY_WITH_TIMEOUT(shown(catalog, "fineweb10B").contains("1 of 103 shards here"), kPatienceMs);
  }
};

QTEST_MAIN(TestStudioDatasets)
#include "test_studio_datasets.moc"
