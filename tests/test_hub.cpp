// `tokamak datasets get` against a real HTTP server (Debian's nginx, tests/support/nginx_server.h) laid out as
// the Hugging Face Hub, with small llm.c shards: what arrives is byte for byte what is served and lists as a
// dataset; a killed download resumes with a Range request for the rest only; damaged files, 401, 404,
// HF_HUB_OFFLINE and a full disk each end in one line with nothing half-written in place. Every assertion is
// on bytes, counts and the server's access log, never on time.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QThread>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <signal.h>

#include "engine/base/data/hub_catalog.h"
#include "engine/fleet/hub/hub_fetch.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/nginx_server.h"
#include "tests/support/sshd_server.h"
#include "tests/support/tiny.h"

using namespace tokamak;
using test::HubFileOptions;
using test::HubRepoOptions;
using test::llmc_shard;

namespace {

// This process's environment with the Hub at ENDPOINT (this side's own is a dead port), and MORE.
QProcessEnvironment environment(const QString& endpoint, const QStringList& more = {}) {
  return test::environment_with(QStringList{"HF_ENDPOINT=" + endpoint} + more);
}

QString datasetDir(const QString& name) { return QString::fromStdString(data_dir()) + "/datasets/" + name; }

QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
}

QStringList gets(const QStringList& requests) {
  QStringList l;
  for (const QString& r : requests)
    if (r.startsWith("GET ")) l << r;
  return l;
}

}  // namespace

class TestHub : public QObject {
  Q_OBJECT

  // fineweb10B's layout, a few thousand tokens a shard: the val shard behind a redirect (as the Hub sends
  // large files to its file store), the others served where they are named, one without X-Linked-Etag.
  QByteArray val_ = llmc_shard(3000, 1), train_[3] = {llmc_shard(4000, 2), llmc_shard(4100, 3), llmc_shard(4200, 4)};

  void serveFineweb(test::NginxServer& hub, int shards = 3) {
    const std::string repo = "kjj0/fineweb10B-gpt2";
    hub.addFile(repo, "fineweb_val_000000.bin", val_, {true, true, {}});
    for (int i = 0; i < shards; ++i)
      hub.addFile(repo, "fineweb_train_00000" + std::to_string(i + 1) + ".bin", train_[i], {false, i != 1, {}});
  }

 private Q_SLOTS:
  void init() { remove_tree(data_dir() + "/datasets"); }  // every test starts with no dataset here

  void wholeDownloadIsWhatIsServedAndListsAsADataset() {
    test::NginxServer hub;
    serveFineweb(hub);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const QProcessEnvironment env = environment(hub.endpoint());
    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "2", "--json"}, env, 120000);
    QVERIFY2(r.code == 0, r.err.constData());
    const QString dir = datasetDir("fineweb10B");
    QCOMPARE(entries(dir), QStringList({".hub-repo", "fineweb_train_000001.bin", "fineweb_train_000002.bin",
                                        "fineweb_val_000000.bin"}));
    QCOMPARE(contents(dir + "/.hub-repo"), QByteArray("kjj0/fineweb10B-gpt2\n"));  // whose files they are
    QCOMPARE(contents(dir + "/fineweb_val_000000.bin"), val_);
    QCOMPARE(contents(dir + "/fineweb_train_000001.bin"), train_[0]);
    QCOMPARE(contents(dir + "/fineweb_train_000002.bin"), train_[1]);
    // The last line is the result; progress came before it.
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    const auto result = nlohmann::json::parse(lines.back().toStdString());
    QCOMPARE(result["event"].get<std::string>(), std::string("dataset"));
    QCOMPARE(result["tokens"].get<uint64_t>(), uint64_t(3000 + 4000 + 4100));
    QCOMPARE(result["bytes"].get<qint64>(), qint64(val_.size() + train_[0].size() + train_[1].size()));
    QVERIFY(nlohmann::json::parse(lines.front().toStdString())["event"] == "progress");
    // Three files came once each, the val shard through the redirect.
    const QStringList got = gets(hub.requests());
    QCOMPARE(got.size(), 4);
    QVERIFY(got.filter("/datasets/kjj0/fineweb10B-gpt2/resolve/main/fineweb_val_000000.bin 302").size() == 1);
    QVERIFY(got.filter("/store/kjj0/fineweb10B-gpt2/fineweb_val_000000.bin 200").size() == 1);

    // `tokamak datasets` lists it with its tokens, and a second get asks the server nothing.
    const test::CliResult list = test::run_tokamak({"datasets", "--json"}, env, 120000);
    bool listed = false;
    for (const QByteArray& l : list.out.split('\n'))
      if (auto j = nlohmann::json::parse(l.toStdString(), nullptr, false); j.is_object() && j["name"] == "fineweb10B")
        listed = j["tokens"].get<uint64_t>() == 11100 && j["path"] == dir.toStdString();
    QVERIFY2(listed, list.out.constData());
    // The catalog says how much of each dataset is here (what the studio's picker shows).
    const test::CliResult cat = test::run_tokamak({"datasets", "catalog", "--json"}, env, 120000);
    QCOMPARE(cat.code, 0);
    int entries_seen = 0;
    for (const QByteArray& l : cat.out.trimmed().split('\n')) {
      const auto j = nlohmann::json::parse(l.toStdString());
      ++entries_seen;
      const bool ours = j["name"] == "fineweb10B";
      QCOMPARE(j["train_present"].get<int>(), ours ? 2 : 0);
      QCOMPARE(j["val_present"].get<bool>(), ours);
      QCOMPARE(j["bytes_present"].get<qint64>(), ours ? qint64(val_.size() + train_[0].size() + train_[1].size()) : 0);
      if (ours) QCOMPARE(j["train_shards"].get<int>(), 103);
    }
    QCOMPARE(entries_seen, 3);
    const int before = hub.requests().size();
    const test::CliResult again =
        test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "2", "--json"}, env, 120000);
    QCOMPARE(again.code, 0);
    QCOMPARE(nlohmann::json::parse(again.out.trimmed().split('\n').back().toStdString())["already_here"].get<int>(), 3);
    QCOMPARE(hub.requests().size(), before);
  }

  void killedDownloadResumesWithARangeRequest() {
    test::NginxServer hub;
    const QByteArray big = llmc_shard(60000, 7);  // 121 KB at 16 KB/s: the kill lands mid-file
    hub.addRepo("slow/shards", {"16k", "", true});
    hub.addFile("slow/shards", "data_train_000001.bin", big);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const QString part = datasetDir("slow--shards") + "/.data_train_000001.bin.part";
    QProcess p;
    p.setProcessEnvironment(environment(hub.endpoint()));
    p.start(test::tokamak_bin(), {"datasets", "get", "hf:slow/shards", "--json"});
    QVERIFY(p.waitForStarted());
    while (QFileInfo(part).size() == 0 && p.state() == QProcess::Running) QThread::msleep(20);
    ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
    p.waitForFinished();
    const qint64 have = QFileInfo(part).size();
    QVERIFY2(have > 0 && have < big.size(), qPrintable(QString::number(have)));
    QVERIFY(!QFile::exists(datasetDir("slow--shards") + "/data_train_000001.bin"));

    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "hf:slow/shards", "--json"}, environment(hub.endpoint()), 120000);
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(contents(datasetDir("slow--shards") + "/data_train_000001.bin"), big);
    QVERIFY(!QFile::exists(part));
    const auto result = nlohmann::json::parse(r.out.trimmed().split('\n').back().toStdString());
    QCOMPARE(result["resumed_from"].get<qint64>(), have);
    QCOMPARE(result["fetched"].get<qint64>(), big.size() - have);
    // The server saw the second request ask for the rest only, and sent just that.
    const QStringList got = gets(hub.requests()).filter("data_train_000001.bin");
    QCOMPARE(got.size(), 2);
    QCOMPARE(got.last(), QString("GET /datasets/slow/shards/resolve/main/data_train_000001.bin 206 bytes=%1- %2")
                             .arg(have)
                             .arg(big.size() - have));
  }

  void damagedFileIsRefusedInOneLine_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QByteArray>("etag");
    QTest::addColumn<QString>("why");
    QTest::newRow("wrong magic") << llmc_shard(2000, 1, 12345) << QByteArray() << "magic 12345";
    QTest::newRow("truncated body") << llmc_shard(2000, 1, 20240520, 3000) << QByteArray() << "header says 3000 tokens";
    QTest::newRow("wrong sha256") << llmc_shard(2000, 1) << test::sha256_hex("something else") << "sha256";
  }
  void damagedFileIsRefusedInOneLine() {
    QFETCH(QByteArray, bytes);
    QFETCH(QByteArray, etag);
    QFETCH(QString, why);
    test::NginxServer hub;
    hub.addFile("bad/damaged", "x_train_000001.bin", bytes, {false, true, etag});
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "hf:bad/damaged", "--json"}, environment(hub.endpoint()), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.trimmed().count('\n') == 0, r.err.constData());
    const QString line = QString::fromUtf8(r.err.trimmed());
    QVERIFY2(line.contains("x_train_000001.bin of dataset bad/damaged failed its check") && line.contains(why),
             qPrintable(line));
    QCOMPARE(entries(datasetDir("bad--damaged")), QStringList{".hub-repo"});  // nothing in place, no .part
  }

  void refusedWithoutTokenNamesHfToken() {
    test::NginxServer hub;
    hub.addRepo("gated/shards", {"", "s3cret", true});
    const QByteArray shard = llmc_shard(2000, 3);
    hub.addFile("gated/shards", "g_train_000001.bin", shard);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "hf:gated/shards", "--json"}, environment(hub.endpoint()), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.errors().size() == 1 && r.errors()[0].contains("HTTP 401") && r.errors()[0].contains("HF_TOKEN"),
             r.err.constData());
    QVERIFY(!QDir(datasetDir("gated--shards")).exists());
    // The token is sent: from HF_TOKEN, and from the Hub's token file.
    QCOMPARE(test::run_tokamak({"datasets", "get", "hf:gated/shards", "--json"},
                               environment(hub.endpoint(), {"HF_TOKEN=s3cret"}), 120000)
                 .code,
             0);
    QCOMPARE(contents(datasetDir("gated--shards") + "/g_train_000001.bin"), shard);
    remove_tree(datasetDir("gated--shards").toStdString());
    const QString hfHome = QString::fromStdString(data_dir()) + "/hf-home";
    QDir().mkpath(hfHome);
    QFile token(hfHome + "/token");
    QVERIFY(token.open(QIODevice::WriteOnly) && token.write("s3cret\n") > 0);
    token.close();
    QCOMPARE(test::run_tokamak({"datasets", "get", "hf:gated/shards", "--json"},
                               environment(hub.endpoint(), {"HF_HOME=" + hfHome}), 120000)
                 .code,
             0);
  }

  void missingFileNamesRepoAndFile() {
    test::NginxServer hub;
    serveFineweb(hub, 2);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r = test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "3", "--json"},
                                                environment(hub.endpoint()), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.errors().size() == 1 && r.errors()[0].contains("HTTP 404") &&
                 r.errors()[0].contains("fineweb_train_000003.bin of dataset kjj0/fineweb10B-gpt2"),
             r.err.constData());
    QCOMPARE(gets(hub.requests()).size(), 0);  // sizes are asked for first: no byte was fetched
    QVERIFY(!QDir(datasetDir("fineweb10B")).exists());
  }

  void offlineMakesNoRequest() {
    test::NginxServer hub;
    serveFineweb(hub);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r = test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "1", "--json"},
                                                environment(hub.endpoint(), {"HF_HUB_OFFLINE=1"}), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.errors().size() == 1 && r.errors()[0].contains("HF_HUB_OFFLINE"), r.err.constData());
    QCOMPARE(hub.requests(), QStringList());
    // What is here is enough offline.
    QCOMPARE(
        test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "1"}, environment(hub.endpoint()), 120000).code,
        0);
    const int before = hub.requests().size();
    QCOMPARE(test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "1"},
                               environment(hub.endpoint(), {"HF_HUB_OFFLINE=1"}), 120000)
                 .code,
             0);
    QCOMPARE(hub.requests().size(), before);
  }

  // --host: the host fetches from the Hub itself (its own HF_ENDPOINT and data folder) and its progress and
  // result are shown here; its failures are its one line, naming the host.
  void hostFetchesItselfOverSsh() {
    test::NginxServer hub;
    serveFineweb(hub);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const std::string hostData = data_dir() + "/host";
    test::SshdServer sshd(test::host_environment(
        hostData, {"HF_ENDPOINT=" + hub.endpoint(), "HF_HOME=" + QString::fromStdString(hostData) + "/hf"}));
    QVERIFY2(sshd.ok(), qPrintable(sshd.error()));
    const SshOptions o = sshd.client();
    const QStringList ssh = sshd.cli_args() + QStringList{"--tokamak", test::tokamak_bin()};
    // This side's HF_ENDPOINT is a dead port: only the host's reaches the Hub.
    const QProcessEnvironment here = QProcessEnvironment::systemEnvironment();
    const test::CliResult r =
        test::run_tokamak(QStringList{"datasets", "get", "fineweb10B", "--shards", "1", "--json"} + ssh, here, 120000);
    QVERIFY2(r.code == 0, r.err.constData());
    const QString there = QString::fromStdString(hostData) + "/tokamak/datasets/fineweb10B";
    QCOMPARE(contents(there + "/fineweb_train_000001.bin"), train_[0]);
    QCOMPARE(contents(there + "/fineweb_val_000000.bin"), val_);
    QVERIFY(!QDir(datasetDir("fineweb10B")).exists());
    const auto result = nlohmann::json::parse(r.out.trimmed().split('\n').back().toStdString());
    QCOMPARE(result["path"].get<std::string>(), there.toStdString());
    QCOMPARE(result["tokens"].get<uint64_t>(), uint64_t(7000));
    const test::CliResult missing =
        test::run_tokamak(QStringList{"datasets", "get", "fineweb10B", "--shards", "5", "--json"} + ssh, here, 120000);
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.errors().size() == 1 && missing.errors()[0].contains("HTTP 404") &&
                 missing.errors()[0].contains("(on " + QString::fromStdString(sshd.target().spec()) + ")"),
             missing.err.constData());
    RemoteHost(sshd.target(), o).close();
    SshOptions shared = o;  // the CLI's own shared connection
    shared.control_dir = cache_dir() + "/ssh";
    RemoteHost(sshd.target(), shared).close();
  }

  // The speedrun's validation on fetched shards: data.path names the dataset, data.val_path its val shard,
  // eval.val_tokens the tokens every evaluation covers (the CLI's start table and each eval event say so).
  void nanoRunTrainsOnFetchedShardsWithTheSpeedrunsValidation() {
    test::NginxServer hub;
    serveFineweb(hub);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const QProcessEnvironment env = environment(hub.endpoint());
    QCOMPARE(test::run_tokamak({"datasets", "get", "fineweb10B", "--shards", "2"}, env, 120000).code, 0);
    const auto train = [&](const std::string& val_tokens) {
      return test::run_tokamak(
          QStringList{"train", "--json"} +
              test::tiny_run_args({"data.path=fineweb10B", "data.val_path=fineweb10B/fineweb_val_000000.bin",
                                   "eval.val_tokens=" + val_tokens, "train.batch_size=2", "train.steps=20",
                                   "eval.every=10", "sample.every=-1", "train.log_every=10", "threads=1"}),
          env, 120000);
    };
    const test::CliResult r = train("2560");  // 40 batches of 2 × 32 tokens
    QVERIFY2(r.code == 0, r.err.constData());
    std::vector<double> losses;
    for (const QByteArray& l : r.out.split('\n'))
      if (auto j = nlohmann::json::parse(l.toStdString(), nullptr, false); j.is_object() && j["event"] == "eval")
        losses.push_back(j["val_loss"].get<double>());
    QCOMPARE(losses.size(), size_t(2));
    for (double v : losses) QVERIFY(v > 0 && v < 20);
    // The val shard holds 3000 tokens: 93 windows of 32 (2976 tokens), not 47 × 64 = 3008.
    const test::CliResult too_many = train("3008");
    QCOMPARE(too_many.code, 1);
    QVERIFY2(too_many.errors().size() == 1 && too_many.errors()[0].contains("fewer than eval.val_tokens (3008)"),
             too_many.err.constData());
    // Not a multiple of batch_size × context: refused before any work, naming the key.
    const test::CliResult ragged = train("100");
    QCOMPARE(ragged.code, 1);
    QVERIFY2(ragged.errors().size() == 1 && ragged.errors()[0].contains("eval.val_tokens (100) must be a multiple"),
             ragged.err.constData());
  }

  // A tmpfs mounted over the datasets folder in a mount namespace of the command's own (root; fails in one
  // line where it cannot mount). Too small from the start: refused before the first byte, with the amounts.
  // Filled while a file comes: one line, the .part kept for a resume.
  // An hf: dataset's folder was named by the repo alone: bob/shards landed in alice/shards' folder (or in a
  // catalog dataset's) and counted her files, of the same names, as already here. Each owner's repo now has
  // its folder (OWNER--REPO: the Hub forbids "--" in names, so it names one repo).
  void ownersOfOneRepoNameKeepTheirOwnFolders() {
    test::NginxServer hub;
    const QByteArray alice = llmc_shard(2000, 21), bob = llmc_shard(2100, 22);
    hub.addFile("alice/shards", "s_train_000001.bin", alice);
    hub.addFile("bob/shards", "s_train_000001.bin", bob);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    for (const QString owner : {"alice", "bob"}) {
      const test::CliResult r = test::run_tokamak({"datasets", "get", "hf:" + owner + "/shards", "--json"},
                                                  environment(hub.endpoint()), 120000);
      QVERIFY2(r.code == 0, r.err.constData());
      const auto result = nlohmann::json::parse(r.out.trimmed().split('\n').back().toStdString());
      QCOMPARE(result["already_here"].get<int>(), 0);
      QCOMPARE(QString::fromStdString(result["path"].get<std::string>()), datasetDir(owner + "--shards"));
    }
    QCOMPARE(contents(datasetDir("alice--shards") + "/s_train_000001.bin"), alice);
    QCOMPARE(contents(datasetDir("bob--shards") + "/s_train_000001.bin"), bob);
    // A folder that holds another repo's files (bob's moved into alice's folder by hand) is refused, in one line
    // naming both, before any of them counts as already here; its files stay as they are.
    QVERIFY(QFile::remove(datasetDir("alice--shards") + "/.hub-repo"));
    QVERIFY(QFile::copy(datasetDir("bob--shards") + "/.hub-repo", datasetDir("alice--shards") + "/.hub-repo"));
    const test::CliResult mixed =
        test::run_tokamak({"datasets", "get", "hf:alice/shards", "--json"}, environment(hub.endpoint()), 120000);
    QCOMPARE(mixed.code, 1);
    QVERIFY2(mixed.errors().size() == 1 &&
                 mixed.errors().front().contains("holds the files of bob/shards, not of "
                                                 "alice/shards") &&
                 mixed.errors().front().contains("hint:"),
             mixed.err.constData());
    QCOMPARE(contents(datasetDir("alice--shards") + "/s_train_000001.bin"), alice);
  }

  // Refused before any request, here or on a host: a name the Hub would not accept, and `--host` with what a
  // get here refuses (`--shards 0` was dropped on the way, and the host fetched everything).
  void badNamesAndCountsAreRefusedBeforeAnyRequest_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--") << QStringList{"hf:a--b/c"}
                        << R"(tokamak: 'hf:a--b/c' does not name a Hub dataset: 'a--b' holds "--" or "..")";
    QTest::newRow("blank") << QStringList{"hf:alice/sh ards"}
                           << "tokamak: 'hf:alice/sh ards' does not name a Hub dataset: 'sh ards' holds ' '";
    QTest::newRow("leading dash") << QStringList{"hf:-a/b"}
                                  << "tokamak: 'hf:-a/b' does not name a Hub dataset: '-a' starts or ends with";
    QTest::newRow("--shards 0 on a host")
        << QStringList{"fineweb10B", "--shards", "0", "--host", "127.0.0.1:1", "--ssh-config", "/dev/null"}
        << "tokamak: --shards 0 fetches no training data";
  }
  void badNamesAndCountsAreRefusedBeforeAnyRequest() {
    QFETCH(QStringList, args);
    QFETCH(QString, expected);
    test::NginxServer hub;
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r =
        test::run_tokamak(QStringList{"datasets", "get"} + args, environment(hub.endpoint()), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.errors().size() == 1 && r.errors().front().startsWith(expected) && r.errors().front().contains("hint:"),
             r.err.constData());
    QCOMPARE(hub.requests().size(), 0);
    QVERIFY(!QDir(QString::fromStdString(data_dir()) + "/datasets").exists() ||
            QDir(QString::fromStdString(data_dir()) + "/datasets").isEmpty());
  }

  // A listing's Link: next was followed wherever it pointed (the token went along) and for as long as it
  // went on, and an entry of another shape was nlohmann's type_error (a float size was cast past 2^64). Now a
  // next page is followed on the endpoint's own origin only, for at most 1000 pages, and an entry this
  // version cannot read is one line naming the repo.
  void listingsAreFollowedOnTheirOwnOriginOnly_data() {
    QTest::addColumn<QString>("next");
    QTest::addColumn<QString>("body");
    QTest::addColumn<QString>("expected");
    QTest::newRow("another origin") << "http://tokamak-test.invalid/api/datasets/o/r/tree/main?cursor=2"
                                    << ""
                                    << "is not followed: its next page is at http://tokamak-test.invalid, not at ";
    QTest::newRow("without end") << "SELF"
                                 << ""
                                 << "goes on past 1000 pages";
    QTest::newRow("a size that is text") << ""
                                         << R"([{"type": "file", "path": "a.bin", "size": "big"}])"
                                         << R"(has an entry this version cannot read ("a.bin" has size "big")";
    QTest::newRow("a size past 2^64") << ""
                                      << R"([{"type": "file", "path": "a.bin", "size": 1e300}])"
                                      << R"(has an entry this version cannot read ("a.bin" has size 1e+300)";
    QTest::newRow("a path that is a number") << ""
                                             << R"([{"type": "file", "path": 7, "size": 3}])"
                                             << "has an entry this version cannot read (a file without a path";
  }
  void listingsAreFollowedOnTheirOwnOriginOnly() {
    QFETCH(QString, next);
    QFETCH(QString, body);
    QFETCH(QString, expected);
    test::NginxServer hub;
    HubRepoOptions o;
    o.body = body.toStdString();
    // "SELF": the listing's own URL, on its own origin, which nginx spells once it has a port.
    o.next = next == "SELF" ? "http://$host:$server_port/api/datasets/o/r/tree/main" : next.toStdString();
    hub.addRepo("o/r", o);
    hub.addFile("o/r", "r_train_000001.bin", llmc_shard(1000, 5));
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "hf:o/r", "--json"}, environment(hub.endpoint()), 120000);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.errors().size() == 1 && r.errors().front().contains("the Hub's listing of o/r ") &&
                 r.errors().front().contains(expected) && r.errors().front().contains("hint:"),
             r.err.constData());
    QCOMPARE(gets(hub.requests()).filter("/resolve/").size(), 0);  // no file was asked for
  }

  // A body longer than the size the Hub listed was written on to its end (a server that never stops would
  // fill the disk), then found "short" and fetched again and again. Now the part is cut at the listed size and
  // its check decides: here the listed bytes are the whole shard, with its sha256, and they are what is kept.
  void aBodyLongerThanListedIsCutOff() {
    test::NginxServer hub;
    const QByteArray shard = llmc_shard(1500, 31), served = shard + QByteArray(200000, 'x');
    HubRepoOptions o;
    o.body = nlohmann::json::array(
                 {{{"type", "file"},
                   {"path", "l_train_000001.bin"},
                   {"size", shard.size()},
                   {"lfs",
                    {{"oid", QCryptographicHash::hash(shard, QCryptographicHash::Sha256).toHex().toStdString()},
                     {"size", shard.size()}}}}})
                 .dump();
    hub.addRepo("long/body", o);
    hub.addFile("long/body", "l_train_000001.bin", served, {false, false, {}});
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const test::CliResult r =
        test::run_tokamak({"datasets", "get", "hf:long/body", "--json"}, environment(hub.endpoint()), 120000);
    QVERIFY2(r.code == 0, r.err.constData());
    QCOMPARE(contents(datasetDir("long--body") + "/l_train_000001.bin"), shard);
    QCOMPARE(gets(hub.requests()).filter("/resolve/").size(), 1);  // once, not again and again
  }

  // The caller's progress runs on the fetching thread while the pool downloads: when it throws, the fetch fails
  // with that error once the pool has stopped, instead of a joinable thread ending the process.
  void aProgressThatThrowsFailsTheFetchNotTheProcess() {
    test::NginxServer hub;
    hub.addRepo("slow/shards", {"32k", "", true});
    hub.addFile("slow/shards", "s_train_000001.bin", llmc_shard(50000, 5));  // 100 KB at 32 KB/s: seconds
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    qputenv("HF_ENDPOINT", hub.endpoint().toUtf8());
    FetchOptions o;
    int calls = 0;
    o.progress = [&](const FetchProgress&) -> bool {
      if (++calls == 2) throw std::runtime_error("the progress display broke");
      return true;
    };
    QString said;
    try {
      fetch_hub_dataset(select_hub_dataset("hf:slow/shards", -1, 0), o);
    } catch (const std::exception& e) {
      said = e.what();
    }
    qunsetenv("HF_ENDPOINT");
    QCOMPARE(said, QString("the progress display broke"));
    QCOMPARE(calls, 2);  // the pool stopped at the failure: no progress after it
    QVERIFY(!QFile::exists(datasetDir("slow--shards") + "/s_train_000001.bin"));
  }

  void fullDiskIsOneLine() {
    test::NginxServer hub;
    const QByteArray big = llmc_shard(100000, 9);  // 201 KB at 32 KB/s
    hub.addRepo("big/shards", {"32k", "", true});
    hub.addFile("big/shards", "b_train_000001.bin", big);
    QVERIFY2(hub.start(), qPrintable(hub.error()));
    const QString datasets = QString::fromStdString(data_dir()) + "/datasets";
    QDir().mkpath(datasets);
    const QString bin = test::tokamak_bin();
    // $0 the folder, $1 the tmpfs size, $2 the tokamak binary; prints the exit code and the .part's size.
    const QString script = R"(mount -t tmpfs -o size=$1 tokamak-full "$0" || exit 99
"$2" datasets get hf:big/shards --json 2>"$0/../err" & pid=$!
if [ "$1" != 64k ]; then
  while [ ! -s "$0/big--shards/.b_train_000001.bin.part" ] && kill -0 $pid 2>/dev/null; do sleep 0.02; done
  dd if=/dev/zero of="$0/filler" bs=4k 2>/dev/null
fi
wait $pid; echo "code=$?"; stat -c 'part=%s' "$0/big--shards/.b_train_000001.bin.part" 2>/dev/null; ls "$0/big--shards" 2>/dev/null
cat "$0/../err" >&2)";
    for (const QString size : {"64k", "256k"}) {
      QProcess p;
      p.setProcessEnvironment(environment(hub.endpoint()));
      p.start("unshare", {"-m", "sh", "-c", script, datasets, size, bin});
      QVERIFY(p.waitForFinished(120000));
      const QString out = p.readAllStandardOutput(), err = QString::fromUtf8(p.readAllStandardError()).trimmed();
      QVERIFY2(p.exitCode() != 99, qPrintable("cannot mount a tmpfs (needs root and `unshare -m`): " + err));
      QVERIFY2(out.contains("code=1"), qPrintable(out + err));
      QVERIFY2(!err.contains('\n'), qPrintable(err));
      QVERIFY2(!out.contains("\nb_train_000001.bin"), qPrintable(out));  // never in place
      if (size == "64k") {
        QVERIFY2(err.contains("not enough disk space") && err.contains("201 kB more"), qPrintable(err));
        QCOMPARE(gets(hub.requests()).size(), 1);  // the listing only
      } else {
        QVERIFY2(err.contains("the disk is full") && err.contains(".part files are kept"), qPrintable(err));
        const int part = out.section("part=", 1).section('\n', 0, 0).toInt();
        QVERIFY2(part > 0 && part < big.size(), qPrintable(out));
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestHub)
#include "test_hub.moc"
