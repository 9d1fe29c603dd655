// A host over SSH, for real: Debian's OpenSSH server on a loopback port (tests/support/sshd_server.h), driven
// through the code the studio uses (engine/fleet/remote/remote_host.h: the ssh command lines; journal_ingest.h: the
// local store). A run started there detached goes on when the ssh client is killed mid-run; following it
// again from the offset the store recorded back-fills what was missed, and at the end the local store holds
// exactly the events of the host's journal, each once. Stop reaches the host. The bad cases — host down, a
// key it does not accept, a changed host key, Tokamak missing, another version — each give one line.
#include <QProcess>
#include <signal.h>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <set>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/run/journal.h"
#include "engine/base/store/journal_ingest.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

std::string runConfig(const std::string& data, int steps) {
  Config c;
  apply_overrides(c, test::quiet_run_overrides(data, steps, {"sample.every=20"}));
  return config_to_json(c);
}

// `runs follow` over ssh into the store: the studio's loop without the studio. Reads until the process
// ends, or until `stop_after` step lines have been recorded (then kills the ssh client, as a lost network
// or a killed studio does). Returns the follower's exit code (-1 when it was killed).
int follow(const RemoteHost& host, JournalIngest& ingest, const std::string& uid, int stop_after = -1) {
  const auto argv = host.follow_argv(uid, ingest.resume_offset());
  QStringList args;
  for (size_t i = 1; i < argv.size(); ++i) args << QString::fromStdString(argv[i]);
  QProcess p;
  p.start(QString::fromStdString(argv[0]), args);
  uint64_t offset = ingest.resume_offset();
  std::string pending;
  int steps = 0;
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < 300000) {
    p.waitForReadyRead(200);
    pending += p.readAllStandardOutput().toStdString();
    uint64_t used = 0;
    auto lines = split_journal(pending, offset, &used);
    pending.erase(0, used), offset += used;
    ingest.ingest(lines);
    for (const JournalLine& l : lines) steps += l.text.find("\"event\":\"step\"") != std::string::npos;
    if (stop_after >= 0 && steps >= stop_after) {
      p.kill();
      p.waitForFinished();
      return -1;
    }
    if (p.state() == QProcess::NotRunning && p.bytesAvailable() == 0) break;
  }
  if (p.exitCode() != 0) qWarning("follow: %s", p.readAllStandardError().constData());
  return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

struct JournalCounts {
  int steps = 0, samples = 0, checkpoints = 0;
  std::string status;
};

JournalCounts countJournal(const std::string& path) {
  JournalCounts c;
  uint64_t next = 0;
  std::set<int64_t> steps;
  for (const JournalLine& l : read_journal(path, 0, &next, 1 << 26)) {
    auto j = nlohmann::json::parse(l.text);
    const std::string e = j["event"];
    if (e == "step" || e == "eval") steps.insert(j["step"].get<int64_t>());
    c.samples += e == "sample", c.checkpoints += e == "checkpoint";
    if (e == "end") c.status = j["status"];
  }
  c.steps = static_cast<int>(steps.size());
  return c;
}

}  // namespace

class TestRemote : public QObject {
  Q_OBJECT

  test::ScratchEnv env_;  // this side: the studio's store in XDG_DATA_HOME
  std::unique_ptr<test::SshHost> ssh_;
  test::SshdServer* sshd_ = nullptr;
  std::string hostData_;

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(env_.ok());
    // The host's runs and store live apart from this side's; they share the cache (tokenizer, corpus).
    ssh_ = std::make_unique<test::SshHost>(env_);
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    sshd_ = &ssh_->sshd(), hostData_ = ssh_->data();
  }

  // A run a failed test left training on the host is ended here, by pid (run_reaper.h).
  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  void testConnectionReportsVersionDevicesAndDisk() {
    RemoteHost host(sshd_->target(), sshd_->client(), test::tokamak_bin().toStdString());
    HostReport r = host.test_connection();
    QCOMPARE(QString::fromStdString(r.version), QString(TOKAMAK_VERSION));
    QVERIFY(!r.devices.empty());
    // "79.8 GB free in <the host's data folder>": the disk where the host's runs go, in the one byte format.
    const QRegularExpression disk("^[0-9.]+ [kMGTP]?B free in " +
                                  QRegularExpression::escape(QString::fromStdString(hostData_)) + "(/|$)");
    QVERIFY2(QString::fromStdString(r.free_disk).contains(disk), r.free_disk.c_str());
  }

  void runOutlivesTheClientAndTheStoreEqualsTheJournal() {
    RemoteHost host(sshd_->target(), sshd_->client(), test::tokamak_bin().toStdString());
    RemoteRun run = host.start_run(runConfig(env_.corpus_excerpt(20000), 120), {"train.seed=7"});
    QCOMPARE(run.uid.size(), size_t(16));
    QVERIFY2(run.folder.find(hostData_) == 0, run.folder.c_str());
    RunStore store;
    {
      JournalIngest ingest(store, run.uid, host.store_name());
      QCOMPARE(follow(host, ingest, run.uid, 10), -1);  // the ssh client killed mid-run
    }
    host.close();  // and the shared connection with it: nothing of this side is left on the line
    // The run goes on without any reader.
    const std::string journal = run.folder + "/events.jsonl";
    uint64_t size_then = 0;
    for (const RemoteRun& r : host.runs(true))
      if (r.uid == run.uid) size_then = r.journal_bytes;
    QVERIFY(size_then > 0);
    QTRY_VERIFY_WITH_TIMEOUT(read_file(journal).size() > size_then + 200, 60000);

    // Re-attach as a restarted studio does: a new reader, from where the store stopped recording.
    JournalIngest again(store, run.uid, host.store_name());
    QVERIFY(again.resume_offset() > 0 && again.resume_offset() <= size_then);
    QCOMPARE(follow(host, again, run.uid), 0);
    QCOMPARE(QString::fromStdString(again.ended()), QString("finished"));

    const JournalCounts want = countJournal(journal);
    QCOMPARE(want.steps, 120);
    const int64_t id = store.find_uid(run.uid);
    QCOMPARE(int(store.metrics(id).size()), want.steps);
    QCOMPARE(int(store.samples(id).size()), want.samples);
    QCOMPARE(int(store.checkpoints(id).size()), want.checkpoints);
    QCOMPARE(QString::fromStdString(store.run(id).status), QString::fromStdString(want.status));
    QCOMPARE(again.resume_offset(), uint64_t(read_file(journal).size()));
    // Reading the whole journal again records nothing twice.
    JournalIngest twice(store, run.uid, host.store_name());
    uint64_t next = 0;
    QCOMPARE(twice.ingest(read_journal(journal, 0, &next, 1 << 26)), 0);
    QCOMPARE(int(store.samples(id).size()), want.samples);
  }

  // `tokamak remote train`, the child the studio starts for a run on a host: its stdout is the host's journal,
  // each line once, though the ssh client under it is killed mid-run; the local store equals the journal.
  void remoteTrainSurvivesAKilledSshClient() {
    const QString cfg = QString::fromStdString(env_.path("remote.json"));
    write_file_atomically(cfg.toStdString(), runConfig(env_.corpus_excerpt(20000), 150));
    const std::string db = env_.path("studio.db");
    QProcess p;
    p.start(test::tokamak_bin(), QStringList{"remote", "train"} + sshd_->cli_args() +
                                     QStringList{"--tokamak", test::tokamak_bin(), "--control", "--db",
                                                 QString::fromStdString(db), "--config", cfg});
    QByteArray out;
    bool killed = false;
    QElapsedTimer t;
    t.start();
    while (p.state() != QProcess::NotRunning && t.elapsed() < 300000) {
      p.waitForReadyRead(200);
      out += p.readAllStandardOutput();
      if (!killed && out.count("\"event\":\"step\"") >= 10) {
        // The ssh client that reads the journal (a child of `tokamak remote`), killed as a dropped network would.
        QProcess pg;
        pg.start("pgrep", {"-P", QString::number(p.processId()), "ssh"});
        pg.waitForFinished();
        const QList<QByteArray> pids = pg.readAllStandardOutput().trimmed().split('\n');
        QVERIFY2(!pids.first().isEmpty(), "no ssh client under tokamak remote");
        for (const QByteArray& pid : pids) ::kill(pid.toInt(), SIGKILL);
        killed = true;
      }
    }
    p.waitForFinished(1000);
    out += p.readAllStandardOutput();
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, err.constData());
    QVERIFY(killed);
    QVERIFY2(err.contains("disconnected from " + QByteArray::fromStdString(sshd_->target().spec())) &&
                 err.contains("retrying in 1 s"),
             err.constData());
    QVERIFY2(err.contains(" in /"), err.constData());
    const int at = err.indexOf(" in /"), eol = err.indexOf('\n', at);
    const std::string folder = err.mid(at + 4, eol - at - 4).toStdString();
    const std::string journal = read_file(folder + "/events.jsonl");
    QCOMPARE(out, QByteArray::fromStdString(journal));  // every line once, none missing
    const JournalCounts want = countJournal(folder + "/events.jsonl");
    RunStore store(db);
    // "tokamak remote: started run UID on HOST in FOLDER"
    const int started = err.indexOf("started run ") + 12;
    const int64_t id = store.find_uid(err.mid(started, 16).toStdString());
    QVERIFY(id > 0);
    QCOMPARE(int(store.metrics(id).size()), want.steps);
    QCOMPARE(int(store.samples(id).size()), want.samples);
    QCOMPARE(QString::fromStdString(store.run(id).status), QString("finished"));
    // `tokamak remote` shares one connection per host under the cache (ControlPersist): end it here.
    SshOptions shared = sshd_->client();
    shared.control_dir = cache_dir() + "/ssh";
    RemoteHost(sshd_->target(), shared).close();
  }

  void stopReachesTheHost() {
    RemoteHost host(sshd_->target(), sshd_->client(), test::tokamak_bin().toStdString());
    RemoteRun run = host.start_run(runConfig(env_.corpus_excerpt(20000), 1000000));
    RunStore store;
    JournalIngest ingest(store, run.uid, host.store_name());
    QCOMPARE(follow(host, ingest, run.uid, 3), -1);
    host.control(run.uid, "stop");
    QCOMPARE(follow(host, ingest, run.uid), 0);
    QCOMPARE(QString::fromStdString(ingest.ended()), QString("stopped"));
    QVERIFY(!store.checkpoints(store.find_uid(run.uid)).empty());
    const QString late = test::error_of([&] { host.control(run.uid, "pause"); });
    QVERIFY2(late.contains("is not running") && !late.contains('\n'), qPrintable(late));
  }

  void badCasesAreOneLineEach_data() {
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("expected");
    QTest::newRow("host down") << "down"
                               << "connection refused";
    QTest::newRow("wrong key") << "key"
                               << "refused the login";
    QTest::newRow("tokamak missing") << "missing"
                                     << "Tokamak is not installed on";
    QTest::newRow("version mismatch") << "version"
                                      << "is version 0.0.1, this one is " TOKAMAK_VERSION ": it does not say which";
    // A build that reads other formats: named, both versions and what differs.
    QTest::newRow("newer formats") << "newer"
                                   << "is version 0.9.0, this one is " TOKAMAK_VERSION ": store schema 11 there";
    QTest::newRow("host key changed") << "hostkey"
                                      << "host key of";
  }
  void badCasesAreOneLineEach() {
    QFETCH(QString, kind);
    QFETCH(QString, expected);
    SshTarget target = sshd_->target();
    SshOptions options = sshd_->client();
    std::string tokamak = test::tokamak_bin().toStdString();
    QTemporaryDir scratch;
    options.control_dir = scratch.path().toStdString();  // a connection of its own, not the shared one
    if (kind == "down") {
      test::SshdServer other;  // a port that was free; nothing listens there once it is stopped
      target.port = other.port();
      other.stop();
    } else if (kind == "key") {
      options.identity = sshd_->strangerKey().toStdString();
    } else if (kind == "missing") {
      tokamak = "/nonexistent/bin/tokamak";
    } else if (kind == "version" || kind == "newer") {
      const std::string fake = scratch.filePath("tokamak").toStdString();
      write_file_atomically(fake, kind == "version" ? "#!/bin/sh\necho 0.0.1\n"
                                                    : "#!/bin/sh\necho '0.9.0 (store schema 11, config keys 3, journal 1)'\n");
      QFile::setPermissions(QString::fromStdString(fake), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
      tokamak = fake;
    } else if (kind == "hostkey") {
      RemoteHost(target, options, tokamak).test_connection();  // the host key is learnt
      RemoteHost(target, options, tokamak).close();
      QVERIFY(sshd_->restartWithNewHostKey());
    }
    const QString e = test::error_of([&] { RemoteHost(target, options, tokamak).test_connection(); });
    RemoteHost(target, options, tokamak).close();
    if (kind == "hostkey") write_file_atomically(options.known_hosts, "");  // later tests learn the new key
    QVERIFY2(e.contains(expected), qPrintable(e));
    QVERIFY2(!e.contains('\n'), qPrintable(e));
    if (kind == "missing") QVERIFY2(e.contains("docs/REMOTE.md"), qPrintable(e));
  }
};

QTEST_GUILESS_MAIN(TestRemote)
#include "test_remote.moc"
