// A CPU run beside another busy LibTorch process: it takes its share of the cores while the other is busy and all
// of them again when it is gone, saying so each time; with threads the user set, it only says so, once. The other
// process is a copy of this one (LibTorch loaded) spinning on a core, started as a grandchild so that it is no
// child of the run's (a run's own children are its ranks, never counted).
#include <QtTest>

#include <ATen/Parallel.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "engine/base/util/core_sharing.h"
#include "engine/base/util/cores.h"

using namespace tokamak;

namespace {

// A process with LibTorch loaded, busy on a core until killed; its pid.
pid_t start_busy_peer() {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::close(fds[0]), ::close(fds[1]);
      volatile uint64_t n = 0;
      for (;;) n = n + 1;  // busy, as a training process's threads are
    }
    (void)!::write(fds[1], &grandchild, sizeof grandchild);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t peer = -1;
  if (::read(fds[0], &peer, sizeof peer) != sizeof peer) peer = -1;
  ::close(fds[0]);
  ::waitpid(child, nullptr, 0);
  return peer;
}

// Looks 0.2 s apart that count this peer alone, busy from a tenth of a core: on a machine loaded by other suites
// the spinning peer may get well under half a core.
CoreSharing::Options only(pid_t peer) {
  CoreSharing::Options o;
  o.interval_s = 0.2, o.min_cores = 0.1;
  o.counts = [peer](long pid) { return pid == peer; };
  return o;
}

struct Polled {
  bool said = false;
  int threads = 0;
  std::string line;
};

// Waits (up to 20 s: the looks are 0.2 s apart, each samples 0.2 s) for the next line.
Polled next_line(CoreSharing& s) {
  Polled p;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(p.said = s.poll(&p.threads, &p.line)) && std::chrono::steady_clock::now() < until)
    QTest::qWait(50);
  return p;
}

}  // namespace

class TestCoreSharing : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { at::set_num_threads(1); }  // LibTorch is loaded here (the peer has it) but never used

  void aRunTakesItsShareWhileAnotherIsBusy() {
    const pid_t peer = start_busy_peer();
    QVERIFY(peer > 0);
    {
      CoreSharing sharing(2, /*adapt=*/true, only(peer));
      const Polled down = next_line(sharing);
      QVERIFY2(down.said, "no line while a LibTorch process was busy beside the run");
      QCOMPARE(down.threads, 1);
      QVERIFY2(down.line.find("pid " + std::to_string(peer)) != std::string::npos &&
                   down.line.find("training with 1 of its 2 threads") != std::string::npos &&
                   down.line.find("hint:") != std::string::npos,
               down.line.c_str());
      ::kill(peer, SIGKILL);
      const Polled up = next_line(sharing);
      QVERIFY2(up.said, "no line when the other process was gone");
      QCOMPARE(up.threads, 2);
      QVERIFY2(up.line.find("training with its 2 threads again") != std::string::npos, up.line.c_str());
    }
    ::kill(peer, SIGKILL);
  }

  // Threads the user set are kept: the busy peer is said once, at the start, and nothing changes.
  void threadsTheUserSetAreOnlyWarnedAbout() {
    const pid_t peer = start_busy_peer();
    QVERIFY(peer > 0);
    CoreSharing sharing(2, /*adapt=*/false, only(peer));
    const Polled said = next_line(sharing);
    ::kill(peer, SIGKILL);
    QVERIFY(said.said);
    QCOMPARE(said.threads, 0);
    QVERIFY2(said.line.find("each runs at a fraction of its speed alone") != std::string::npos, said.line.c_str());
    QTest::qWait(600);
    int threads = 0;
    std::string line;
    QVERIFY(!sharing.poll(&threads, &line));  // said once only
  }

  // Alone (no process that counts), nothing is said and nothing changes.
  void aloneNothingChanges() {
    CoreSharing sharing(2, /*adapt=*/true, only(-1));
    QTest::qWait(700);
    int threads = 0;
    std::string line;
    QVERIFY(!sharing.poll(&threads, &line));
    QCOMPARE(threads, 0);
    QVERIFY(cores_given() >= 1);
  }
};

QTEST_GUILESS_MAIN(TestCoreSharing)
#include "test_core_sharing.moc"
