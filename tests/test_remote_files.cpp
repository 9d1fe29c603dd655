// What comes back from a host's run, for real over ssh (Debian's sshd on loopback, tests/support/sshd_server.h):
// "Download checkpoint" (engine/fleet/remote/download.h and `tokamak remote download`, the child the studio runs)
// copies exactly the host's bytes, never shows an unverified file under the destination name, continues a
// broken copy from where it stopped, and re-fetches a damaged partial copy; the other cases are one line each.
// The host's data folder is this machine's scratch folder, so the test reads the host's bytes directly.
#include <QtTest>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/download.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/base/util/files.h"
#include "engine/base/util/sha256.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

class TestRemoteFiles : public QObject {
  Q_OBJECT

  test::ScratchEnv env_;
  std::unique_ptr<test::SshHost> ssh_;
  test::SshdServer* sshd_ = nullptr;
  std::string hostData_, uid_, checkpoint_;

  RemoteHost host() const { return ssh_->direct(test::tokamak_bin().toStdString()); }

  // `tokamak remote ARGS --host ... --json` as the studio runs it.
  test::CliResult remote(const QStringList& args) {
    return test::run_tokamak(QStringList{"remote", args[0]} + sshd_->cli_args() +
                             QStringList{"--tokamak", test::tokamak_bin()} + args.mid(1) + QStringList{"--json"});
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY(env_.ok());
    ssh_ = std::make_unique<test::SshHost>(env_);
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    sshd_ = &ssh_->sshd(), hostData_ = ssh_->data();
    // A finished run on the host with two checkpoints (the tiny model with AdamW's state: ~19 MB each).
    Config c;
    apply_overrides(
        c, test::tiny_run_overrides({"data.path=" + env_.corpus_excerpt(20000), "train.batch_size=2", "train.steps=20",
                                     "checkpoint.every=10", "eval.every=0", "sample.every=0", "threads=1"}));
    const RemoteRun run = host().start_run(config_to_json(c));
    uid_ = run.uid;
    host().run({test::tokamak_bin().toStdString(), "runs", "follow", uid_}, {}, 300);  // returns at the run's end
    const std::vector<RemoteCheckpoint> all = host().checkpoints(uid_);
    QCOMPARE(int(all.size()), 2);
    QCOMPARE(all[0].step, int64_t(10));
    QCOMPARE(all[1].step, int64_t(20));
    checkpoint_ = all[1].path;
    QVERIFY2(all[1].bytes > 4u << 20 && all[1].bytes == read_file(checkpoint_).size(), checkpoint_.c_str());
  }

  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  // The CLI, as the studio runs it: progress lines, then the verified file under its name and nothing else.
  void downloadCopiesTheHostsBytes() {
    const QString to = QString::fromStdString(env_.path("dl-full"));
    const test::CliResult r = remote({"download", QString::fromStdString(uid_), "--to", to});
    QVERIFY2(r.code == 0, r.err.constData());
    const auto lines = r.json_lines();
    QVERIFY(lines.size() >= 3);
    QCOMPARE(QString::fromStdString(lines.front()["event"]), QString("progress"));
    QCOMPARE(lines.front()["done"].get<uint64_t>(), uint64_t(0));
    const auto& done = lines.back();
    QCOMPARE(QString::fromStdString(done["event"]), QString("downloaded"));
    const std::string local = to.toStdString() + "/step_20.safetensors";
    QCOMPARE(QString::fromStdString(done["path"]), QString::fromStdString(local));
    QVERIFY(read_file(local) == read_file(checkpoint_));
    QCOMPARE(done["fetched"].get<uint64_t>(), uint64_t(read_file(checkpoint_).size()));
    QCOMPARE(done["files"][0]["sha256"].get<std::string>(), sha256_of_file(checkpoint_));
    QCOMPARE(QDir(to).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot),
             QStringList{"step_20.safetensors"});
    // A step picks an older checkpoint; one the run does not have is one line naming those it has.
    QCOMPARE(remote({"download", QString::fromStdString(uid_), "10", "--to", to}).code, 0);
    QVERIFY(read_file(to.toStdString() + "/step_10.safetensors") == read_file(all_checkpoints().front()));
    const test::CliResult bad = remote({"download", QString::fromStdString(uid_), "15", "--to", to});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("has no checkpoint '15'") && bad.err.contains("steps 10, 20") &&
                 bad.err.trimmed().count('\n') == 0,
             bad.err.constData());
    // Again: the file is the host's already, nothing crosses the network.
    const test::CliResult again = remote({"download", QString::fromStdString(uid_), "--to", to});
    QCOMPARE(again.code, 0);
    QCOMPARE(again.json_lines().back()["already_here"].get<bool>(), true);
    QCOMPARE(again.json_lines().back()["fetched"].get<uint64_t>(), uint64_t(0));
  }

  // A copy broken off midway (the ssh reading it killed) keeps its partial file; the next download appends only
  // the rest, and the destination name appears only once the whole is verified.
  void brokenCopyResumesWithTheRest() {
    const std::string to = env_.path("dl-resume"), local = to + "/step_20.safetensors";
    const uint64_t size = read_file(checkpoint_).size();
    bool early = false;
    const QString e = test::error_of([&] {
      download_from_host(host(), checkpoint_, to, [&](uint64_t done, uint64_t) {
        early = early || path_exists(local);
        return done < size / 3;
      });
    });
    QVERIFY2(e.contains("download stopped: the copy of step_20.safetensors stopped at") && !e.contains('\n'),
             qPrintable(e));
    QVERIFY(!early && !path_exists(local));
    const std::string part = partial_download_path(to, "step_20.safetensors");
    const uint64_t have = read_file(part).size();
    QVERIFY2(have >= size / 3 && have < size, std::to_string(have).c_str());
    QVERIFY(read_file(checkpoint_).compare(0, have, read_file(part)) == 0);  // a prefix of the host's bytes

    uint64_t first = 0;
    const DownloadResult r = download_from_host(host(), checkpoint_, to, [&](uint64_t done, uint64_t) {
      early = early || path_exists(local);
      if (!first) first = done;
      return true;
    });
    QVERIFY(!early);
    QCOMPARE(first, have);  // progress starts where the partial copy ended
    QCOMPARE(r.resumed_from, have);
    QCOMPARE(r.fetched, size - have);  // only the rest crossed the network
    QCOMPARE(r.refetched, 0);
    QVERIFY(read_file(local) == read_file(checkpoint_));
    QVERIFY(!path_exists(part));
  }

  // A partial copy with a damaged byte fails the checksum and is fetched again from the start (through the CLI).
  void damagedPartialIsFetchedAgain() {
    const std::string to = env_.path("dl-damaged");
    make_dirs(to);
    std::string prefix = read_file(checkpoint_).substr(0, 3u << 20);
    prefix[1000] ^= 0x55;
    write_file_atomically(partial_download_path(to, "step_20.safetensors"), prefix);
    const test::CliResult r = remote({"download", QString::fromStdString(uid_), "--to", QString::fromStdString(to)});
    QVERIFY2(r.code == 0, r.err.constData());
    const auto done = r.json_lines().back();
    const uint64_t size = read_file(checkpoint_).size();
    QCOMPARE(done["resumed_from"].get<uint64_t>(), uint64_t(prefix.size()));
    QCOMPARE(done["refetched"].get<int>(), 1);
    QCOMPARE(done["fetched"].get<uint64_t>(), size - prefix.size() + size);
    QVERIFY(read_file(to + "/step_20.safetensors") == read_file(checkpoint_));
  }

  // The host's file changes while it is copied: the checksum taken before does not match, nothing is kept.
  void changedFileIsOneLineAndNothingKept() {
    const std::string file = hostData_ + "/changing.bin", to = env_.path("dl-changed");
    write_file_atomically(file, std::string(1 << 20, 'a'));
    const QString e = test::error_of([&] {
      download_from_host(host(), file, to, [&](uint64_t, uint64_t) {
        if (read_file(file)[0] == 'a') write_file_atomically(file, std::string(1 << 20, 'b'));
        return true;
      });
    });
    QVERIFY2(e.contains("does not match the host's sha256") && !e.contains('\n'), qPrintable(e));
    QVERIFY(!path_exists(to + "/changing.bin") && !path_exists(partial_download_path(to, "changing.bin")));
  }

  void badCasesAreOneLineEach() {
    const std::string to = env_.path("dl-bad");
    QString e = test::error_of([&] { download_from_host(host(), hostData_ + "/nothing-here", to); });
    QVERIFY2(
        e.contains("is not a file or folder on " + QString::fromStdString(sshd_->target().spec())) && !e.contains('\n'),
        qPrintable(e));
    make_dirs(to);
    write_file_atomically(to + "/step_20.safetensors", "something else");
    e = test::error_of([&] { download_from_host(host(), checkpoint_, to); });
    QVERIFY2(e.contains("exists and is not the host's") && !e.contains('\n'), qPrintable(e));
    QCOMPARE(QString::fromStdString(read_file(to + "/step_20.safetensors")), QString("something else"));
    const test::CliResult none = remote({"download", "0123456789abcdef", "--to", QString::fromStdString(to)});
    QCOMPARE(none.code, 1);
    QVERIFY2(none.err.trimmed().count('\n') == 0 && none.err.startsWith("tokamak: "), none.err.constData());
  }

 private:
  std::vector<std::string> all_checkpoints() {
    std::vector<std::string> v;
    for (const RemoteCheckpoint& c : host().checkpoints(uid_)) v.push_back(c.path);
    return v;
  }
};

QTEST_GUILESS_MAIN(TestRemoteFiles)
#include "test_remote_files.moc"
