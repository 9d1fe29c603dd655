// The queue's worker in this process, on a run whose engine is stopped with SIGSTOP until it is called stalled:
// a run whose process outlives the stall's SIGKILL (a rank in uninterruptible sleep, which no test can stage, so
// the worker's alive check is the test's) is said once and neither queued again nor settled as a crash until it
// has ended, then queued again; and notices still being sent when the worker ends are written to its log.
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

// work_queue on a thread of this process: its notes kept, and while `hold` is set every run counts as alive.
// No QProcess may run meanwhile: the worker reaps any child of this process (waitpid(-1)).
class ThreadWorker {
 public:
  explicit ThreadWorker(const std::string& db) : db_(db) {
    QueueWorkerOptions o;
    o.db = db, o.poll_s = 0.1;
    o.engine = (QFileInfo(test::tokamak_bin()).absolutePath() + "/tokamak-engine").toStdString();
    o.note = [this](const std::string& s) {
      std::lock_guard<std::mutex> lock(mutex_);
      notes_ += QString::fromStdString(s) + "\n";
    };
    o.process_alive = [this](const std::string& folder) { return hold || run_process_alive(RunFolder{folder}); };
    o.should_leave = [this] { return leave.load(); };
    thread_ = std::thread([this, o] {
      work_queue(o);
      ended_ = true;
    });
  }
  // A test that failed half-way leaves its run going: it is ended, and nothing started again, so the worker ends.
  ~ThreadWorker() {
    if (!ended_) {
      hold = false;
      RunStore store(db_);
      RunQueue(store).set_paused(true);
      test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    }
    thread_.join();
  }
  QString notes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return notes_;
  }
  bool ended() const { return ended_; }
  std::atomic<bool> hold{false};
  std::atomic<bool> leave{false};  // the worker ends at its next pass, its runs left as they are

 private:
  std::string db_;
  std::mutex mutex_;
  QString notes_;
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

int64_t queueRun(const std::string& db, const std::vector<std::string>& overrides) {
  Config c;
  apply_overrides(c, overrides);
  c.name = "stalls";
  RunStore store(db);
  RunQueue queue(store);
  QueueItem q;
  q.name = c.name, q.config_json = config_to_json(c, -1);
  return queue.add(q);
}

QueueItem itemOf(const std::string& db, int64_t id) {
  RunStore store(db);
  return RunQueue(store).item(id);
}

int stepsOf(const QueueItem& q) {
  if (q.folder.empty() || !path_exists(RunFolder{q.folder}.journal())) return 0;
  return int(QString::fromStdString(read_file(RunFolder{q.folder}.journal())).count("\"event\":\"step\""));
}

}  // namespace

class TestQueueStall : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  QTemporaryDir config_;

 private Q_SLOTS:
  void init() {
    env_ = std::make_unique<test::ScratchEnv>();
    qputenv("XDG_CONFIG_HOME", config_.filePath("config").toUtf8());  // no notices of the user's settings
  }
  void cleanup() {
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    qunsetenv("XDG_CONFIG_HOME");
    env_.reset();
  }

  void aRunThatOutlivesItsKillIsSaidOnceAndQueuedAgainOnlyOnceGone() {
    QVERIFY(env_->ok());
    const std::string db = default_db_path();
    const int64_t id = queueRun(db, test::quiet_run_overrides(env_->corpus_excerpt(20000), 1000000,
                                                              {"health.stall_factor=3", "health.stall_min_s=2",
                                                               "health.stall_requeue_minutes=0.05",
                                                               "checkpoint.every=5"}));
    ThreadWorker worker(db);
    QTRY_VERIFY_WITH_TIMEOUT(stepsOf(itemOf(db, id)) >= 8, test::kPatienceMs);
    const RunFolder folder{itemOf(db, id).folder};
    worker.hold = true;
    QCOMPARE(::kill(static_cast<pid_t>(read_pid(folder)), SIGSTOP), 0);
    QTRY_VERIFY_WITH_TIMEOUT(worker.notes().contains("is still alive after SIGKILL"), 4 * test::kPatienceMs);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // fifteen more of the worker's looks
    QVERIFY(!run_process_alive(folder));  // really gone: only the worker's check says otherwise
    QCOMPARE(worker.notes().count("is still alive after SIGKILL"), 1);
    QVERIFY2(!worker.notes().contains("queued again ("), qPrintable(worker.notes()));
    QueueItem row = itemOf(db, id);
    QCOMPARE(row.state, std::string("running"));  // not settled as the crash it looks like
    QCOMPARE(row.requeues, int64_t{0});
    {
      RunStore store(db);
      RunQueue(store).set_paused(true);  // so that the worker ends once it has queued the run again
    }
    worker.hold = false;
    QTRY_VERIFY_WITH_TIMEOUT(worker.ended(), test::kPatienceMs);
    QVERIFY2(worker.notes().contains("ended and queued again (1 of 3)"), qPrintable(worker.notes()));
    row = itemOf(db, id);
    QCOMPARE(row.state, std::string("queued"));
    QCOMPARE(row.requeues, int64_t{1});
  }

  // The worker that killed a stalled run ends before the process does (restarted, or killed itself): the next
  // worker finds the mark it left, waits for the process to be gone and queues the run again, as the first would
  // have, instead of settling it as a crash.
  void aRunKilledByAnEndedWorkerIsQueuedAgainByTheNext() {
    QVERIFY(env_->ok());
    const std::string db = default_db_path();
    const int64_t id = queueRun(db, test::quiet_run_overrides(env_->corpus_excerpt(20000), 1000000,
                                                              {"health.stall_factor=3", "health.stall_min_s=2",
                                                               "health.stall_requeue_minutes=0.05",
                                                               "checkpoint.every=5"}));
    {
      ThreadWorker first(db);
      QTRY_VERIFY_WITH_TIMEOUT(stepsOf(itemOf(db, id)) >= 8, test::kPatienceMs);
      const RunFolder folder{itemOf(db, id).folder};
      first.hold = true;
      QCOMPARE(::kill(static_cast<pid_t>(read_pid(folder)), SIGSTOP), 0);
      QTRY_VERIFY_WITH_TIMEOUT(first.notes().contains("is still alive after SIGKILL"), 4 * test::kPatienceMs);
      QVERIFY(path_exists(folder.queue_kill_file()));
      first.leave = true;
      QTRY_VERIFY_WITH_TIMEOUT(first.ended(), test::kPatienceMs);
      QVERIFY2(!first.notes().contains("queued again ("), qPrintable(first.notes()));
    }
    QCOMPARE(itemOf(db, id).state, std::string("running"));
    {
      RunStore store(db);
      RunQueue(store).set_paused(true);  // so that the next worker ends once it has queued the run again
    }
    ThreadWorker next(db);
    QTRY_VERIFY_WITH_TIMEOUT(next.ended(), test::kPatienceMs);
    QVERIFY2(next.notes().contains("was ended by an earlier worker") &&
                 next.notes().contains("ended and queued again (1 of 3)"),
             qPrintable(next.notes()));
    const QueueItem row = itemOf(db, id);
    QCOMPARE(row.state, std::string("queued"));
    QCOMPARE(row.requeues, int64_t{1});
    QVERIFY(!path_exists(RunFolder{row.folder}.queue_kill_file()));  // the next segment starts with no mark
  }

  // Two runs stall side by side; their notices go to a webhook that takes the connection and never answers (a
  // socket never accepted): one is being sent, the other waits behind it. Both runs are killed, the worker ends
  // with both notices still out, gives them up, and says so in its log.
  void noticesGivenUpAtTheWorkersEndAreLogged() {
    QVERIFY(env_->ok());
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET, addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    QVERIFY(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(listener, 4) == 0 &&
            ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    write_private_file(config_dir() + "/notifications.json",
                       "{\"desktop\": false, \"webhook\": \"http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) +
                           "/hook\"}");
    const std::string db = default_db_path();
    const std::vector<std::string> stalls =
        test::quiet_run_overrides(env_->corpus_excerpt(20000), 1000000, {"health.stall_factor=3", "health.stall_min_s=2"});
    const int64_t ids[] = {queueRun(db, stalls), queueRun(db, stalls)};
    {
      RunStore store(db);
      RunQueue(store).set_parallel(2);
    }
    ThreadWorker worker(db);
    QTRY_VERIFY_WITH_TIMEOUT(stepsOf(itemOf(db, ids[0])) >= 6 && stepsOf(itemOf(db, ids[1])) >= 6, test::kPatienceMs);
    std::vector<pid_t> pids;
    for (int64_t id : ids) pids.push_back(static_cast<pid_t>(read_pid(RunFolder{itemOf(db, id).folder})));
    for (pid_t pid : pids) QCOMPARE(::kill(pid, SIGSTOP), 0);
    QTRY_VERIFY_WITH_TIMEOUT(worker.notes().count("stalled: no step for") == 2, 4 * test::kPatienceMs);
    for (pid_t pid : pids) QCOMPARE(::kill(pid, SIGKILL), 0);  // the rows end (crashed), the worker with them
    QTRY_VERIFY_WITH_TIMEOUT(worker.ended(), test::kPatienceMs);
    ::close(listener);
    QVERIFY2(worker.notes().contains("a notification was not sent: 2 notices were still being sent"),
             qPrintable(worker.notes()));
    QCOMPARE(worker.notes().count("a notification was not sent"), 1);
  }
};

QTEST_GUILESS_MAIN(TestQueueStall)
#include "test_queue_stall.moc"
