// A host whose disk fills up under a run, for real: sshd runs in a mount namespace of its own (`unshare -m`)
// where the host's run folders are on a tmpfs of 96 KB, so the run's journal meets ENOSPC after a few hundred
// steps. Followed from here by `tokamak remote train` (the studio's child), the run must end with one clear
// line on the client's stderr, every journal line that reached the host's disk recorded here once, and the
// local run marked ended with the reason. Needs root (mount); where it cannot mount, the test fails with
// one line saying so — it does not skip.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/run/journal.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/sshd_server.h"
#include "tests/support/tiny.h"

using namespace tokamak;

class TestRemoteDiskFull : public QObject {
  Q_OBJECT

  test::ScratchEnv env_;

 private Q_SLOTS:
  void diskFullOnTheHostIsOneLineAndNothingLost() {
    QVERIFY(env_.ok());
    const QString bin = test::tokamak_bin();
    const std::string hostData = env_.path("host-data"), runs = hostData + "/tokamak/checkpoints";
    make_dirs(runs);
    // $0: where to mount; then the sshd command line. Only sshd's sessions (and the runs they start) see it.
    test::SshdServer sshd(
        test::host_environment(hostData),
        {"unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=96k tokamak-full \"$0\" || exit 1; exec \"$@\"",
         QString::fromStdString(runs)});
    QVERIFY2(sshd.ok(), qPrintable("cannot run sshd over a tiny tmpfs (needs root and `unshare -m`): " +
                                   sshd.error().simplified()));

    Config c;
    apply_overrides(c, test::quiet_run_overrides(env_.corpus_excerpt(20000), 1000000,
                                                 {"checkpoint.every=0",
                                                  // Checkpoints on the real disk: the run's start checks there
                                                  // is room for two, so only the journal is on the tiny one.
                                                  "checkpoint.dir=" + env_.path("host-checkpoints")}));
    const QString cfg = QString::fromStdString(env_.path("run.json"));
    write_file_atomically(cfg.toStdString(), config_to_json(c));
    const std::string db = env_.path("studio.db");
    const SshOptions o = sshd.client();
    const test::CliResult ran =
        test::run_tokamak(QStringList{"remote", "train"} + sshd.cli_args() +
                          QStringList{"--tokamak", bin, "--db", QString::fromStdString(db), "--config", cfg});
    const QByteArray out = ran.out, err = ran.err;
    QCOMPARE(ran.code, 1);
    // One clear line: the run's own failure, naming the full disk.
    const QStringList errors = ran.errors();
    QVERIFY2(errors.size() == 1 && errors[0].contains("failed") && errors[0].contains("disk is full"), err.constData());

    // The host's journal (read there: the tmpfs is seen only inside sshd's namespace) is all here, once each.
    const int at = err.indexOf(" in /"), eol = err.indexOf('\n', at);
    const std::string folder = err.mid(at + 4, eol - at - 4).toStdString();
    RemoteHost host(sshd.target(), o, bin.toStdString());
    const std::string journal = host.run({"cat", folder + "/events.jsonl"});
    QVERIFY(journal.size() > 20000);
    QCOMPARE(out, QByteArray::fromStdString(journal));
    uint64_t used = 0;
    int steps = 0;
    for (const JournalLine& l : split_journal(journal, 0, &used))
      steps += nlohmann::json::parse(l.text)["event"] == "step";
    RunStore store(db);
    const int started = err.indexOf("started run ") + 12;
    const int64_t id = store.find_uid(err.mid(started, 16).toStdString());
    QVERIFY(id > 0);
    QCOMPARE(int(store.metrics(id).size()), steps);
    const RunInfo run = store.run(id);
    QCOMPARE(QString::fromStdString(run.status), QString("failed"));
    QVERIFY2(QString::fromStdString(run.error).contains("disk is full"), run.error.c_str());
    host.close();
    SshOptions shared = o;  // `tokamak remote`'s own shared connection
    shared.control_dir = cache_dir() + "/ssh";
    RemoteHost(sshd.target(), shared).close();
  }
};

QTEST_GUILESS_MAIN(TestRemoteDiskFull)
#include "test_remote_disk_full.moc"
