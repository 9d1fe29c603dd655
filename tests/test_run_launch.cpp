// Starting a run detached (engine/base/run/run_launch) and the segments of a run folder: a pid file that cannot be
// written is one error, never a starter and a child waiting on each other for good; a resumed segment that dies
// reads "crashed", never the status the earlier segment left.
#include <QtTest>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "engine/base/run/run_folder.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"

using namespace tokamak;

namespace {

// Waits up to SECONDS for PID; kills its process group and returns -1 when it is still there.
int wait_or_kill(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace

class TestRunLaunch : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // A full disk, a quota, a folder made read-only: any failure to write the pid file. Here the pid file's name is a
  // folder, which a rename cannot replace even for root. Launched from a child of this test, so that a hang is
  // seen and ended instead of stopping the suite.
  void unwritablePidFileIsOneErrorNotAHang() {
    test::ScratchEnv env;
    const RunFolder f{env.path("run")};
    create_run_folder(f, {"0123456789abcdef", "hang", "localhost", f.path, 0});
    QVERIFY(::mkdir(f.pid_file().c_str(), 0755) == 0);
    const pid_t starter = ::fork();
    QVERIFY(starter >= 0);
    if (starter == 0) {
      int code = 2;
      try {
        launch_detached("/bin/sh", {"-c", "exec sleep 30"}, f, "0123456789abcdef", {});
      } catch (const Error& e) {
        code = std::string(e.what()).find(f.pid_file()) != std::string::npos ? 0 : 3;
      }
      ::_exit(code);
    }
    const int code = wait_or_kill(starter, 20);
    QVERIFY2(code != -1, "the starter still waited after 20 s: it and its child wait on each other");
    QCOMPARE(code, 0);  // threw the pid file's error, naming it
  }

  // A start that fails (here: an engine that does not exec; a full disk under the pid file takes the same way out)
  // leaves no half-made run folder, which `runs list` and a host's listing would show as a crashed run. A resumed
  // run's folder, there before, stays.
  void aFailedStartLeavesNoRunFolder() {
    test::ScratchEnv env;
    const RunFolder fresh{env.path("runs/fresh")};
    QString e = test::error_of(
        [&] { start_run_detached("/nonexistent/tokamak-engine", fresh, "00000000000000aa", "fresh", "{}", {}); });
    QVERIFY2(e.contains("cannot start the run"), qPrintable(e));
    QVERIFY(!path_exists(fresh.path));
    QVERIFY(path_exists(env.path("runs")));  // only the run's own folder goes
    const RunFolder resumed{env.path("runs/resumed")};
    create_run_folder(resumed, {"00000000000000bb", "resumed", "localhost", resumed.path, 0});
    e = test::error_of(
        [&] { start_run_detached("/nonexistent/tokamak-engine", resumed, "00000000000000bb", "resumed", "{}", {}); });
    QVERIFY2(e.contains("cannot start the run"), qPrintable(e));
    QVERIFY(path_exists(resumed.info_file()));
  }

  // The earlier segment ended "finished"; the resumed one is killed. It must read crashed.
  void killedSegmentAfterAFinishedOneReadsCrashed() {
    test::ScratchEnv env;
    const RunFolder f{env.path("run")};
    create_run_folder(f, {"0123456789abcdef", "resumed", "localhost", f.path, 0});
    write_exit_file(f, "finished", 0, "");
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("finished"));
    const long pid = launch_detached("/bin/sh", {"-c", "exec sleep 30"}, f, "0123456789abcdef", {});
    QVERIFY(!path_exists(f.exit_file()));
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("running"));
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    ::waitpid(static_cast<pid_t>(pid), nullptr, 0);  // this test is its starter: reaped, it is gone
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("crashed"));
  }

  // The foreground owner (`tokamak train` resuming in the folder) does the same through begin_run_segment; and an
  // exit file older than the pid file (left by a program that did not remove it) is not read as this segment's.
  void aNewSegmentLeavesNoOldExitStatus() {
    test::ScratchEnv env;
    const RunFolder f{env.path("run")};
    create_run_folder(f, {"0123456789abcdef", "resumed", "localhost", f.path, 0});
    write_exit_file(f, "stopped", 0, "");
    begin_run_segment(f, ::getpid());
    QVERIFY(!path_exists(f.exit_file()));
    QVERIFY(pid_file_names(f, ::getpid()));
    // A stale one: written, then a pid file after it (a dead pid), as an older program left a resumed folder.
    write_exit_file(f, "finished", 0, "");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_file_atomically(f.pid_file(), "999999999 1\n");
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("crashed"));
    // And the ordinary order, the exit file after the pid file, is read as written.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_exit_file(f, "finished", 0, "");
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("finished"));
  }

  // A file that several processes update (the bandwidth and GEMM-rate caches: runs starting together, each with
  // its own key): read, changed and written under with_file_lock, nobody's entry is lost. Each writer waits between
  // its read and its write, as a measurement does, so without the lock the last writer would win.
  void concurrentUpdatesUnderTheLockKeepEveryEntry() {
    test::ScratchEnv env;
    const std::string cache = env.path("cache.txt");
    write_file_atomically(cache, "");
    constexpr int kWriters = 4, kRounds = 3;
    std::vector<pid_t> kids;
    for (int w = 0; w < kWriters; ++w) {
      const pid_t pid = ::fork();
      QVERIFY(pid >= 0);
      if (pid == 0) {
        for (int r = 0; r < kRounds; ++r)
          with_file_lock(cache + ".lock", [&] {
            const std::string before = read_file(cache);
            std::this_thread::sleep_for(std::chrono::milliseconds(15));
            write_file_atomically(cache, before + std::to_string(w) + ":" + std::to_string(r) + "\n");
          });
        ::_exit(0);
      }
      kids.push_back(pid);
    }
    for (pid_t k : kids) {
      int status = 0;
      QCOMPARE(::waitpid(k, &status, 0), k);
      QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const QStringList lines = QString::fromStdString(read_file(cache)).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), kWriters * kRounds);
    for (int w = 0; w < kWriters; ++w)
      for (int r = 0; r < kRounds; ++r) QVERIFY(lines.contains(QString("%1:%2").arg(w).arg(r)));
    // No temporary is left beside it: each was renamed onto the file.
    const QStringList left = QDir(QString::fromStdString(env.path(""))).entryList({"cache.txt.tmp*"}, QDir::Files);
    QVERIFY2(left.isEmpty(), qPrintable(left.join(", ")));
  }
};

QTEST_GUILESS_MAIN(TestRunLaunch)
#include "test_run_launch.moc"
