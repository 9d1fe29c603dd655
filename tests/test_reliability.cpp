// What a run, a follower or the studio may never do to the user, checked on the parts themselves (no training, no
// server): read another process's /proc files and die when it exits meanwhile; replace a file it was not given
// (the store, a checkpoint, a link, a device); leave a webhook's secret readable or shown; wait on a notice; drop the
// runs that failed from a verdict.
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <memory>
#include <iterator>
#include <limits>
#include <mutex>

#include "engine/fleet/notify/notice_queue.h"
#include "engine/fleet/notify/notify.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/scoreboard.h"
#include "engine/base/store/verdict.h"
#include "engine/base/util/files.h"
#include "engine/base/util/output_path.h"
#include "engine/base/util/proc_files.h"
#include "engine/base/util/utf8.h"
#include "tests/support/test_support.h"

using namespace tokamak;
using tokamak::test::error_of;

namespace {

// A child that sleeps until it is killed.
pid_t sleeper() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  return pid;
}

void end(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

std::string write(const QTemporaryDir& dir, const char* name, const std::string& bytes) {
  const std::string path = dir.filePath(name).toStdString();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A safetensors file with no tensors and METADATA_JSON as its metadata.
std::string safetensors_with(const std::string& metadata_json) {
  const std::string header = "{\"__metadata__\":" + metadata_json + "}";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return bytes + header;
}

// A gate a test opens: a sender waits on it as a webhook that does not answer would.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    ++entered;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
  bool wait_entered(int n) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, std::chrono::milliseconds(test::kPatienceMs), [&] { return entered >= n; });
  }
};

const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

class TestReliability : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The process exits between the open and the read: the kernel answers ESRCH. libstdc++'s stream iterator throws
  // that through (the abort this guards against); the one reader says "gone".
  void aProcFileThatVanishesMidReadIsGone() {
    const pid_t pid = sleeper();
    QVERIFY(pid > 0);
    const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
    QVERIFY(read_proc_stat(pid));
    QCOMPARE(read_proc_stat(pid)->ppid, long(::getpid()));
    std::ifstream stream(stat);
    const int fd = ::open(stat.c_str(), O_RDONLY | O_CLOEXEC);
    QVERIFY(fd >= 0);
    end(pid);
    bool threw = false;
    try {
      std::string all((std::istreambuf_iterator<char>(stream)), {});
    } catch (const std::exception&) {
      threw = true;
    }
    QVERIFY2(threw, "libstdc++ no longer throws here: this test no longer shows the danger it guards against");
    QVERIFY(!read_proc_fd(fd));
    ::close(fd);
    QVERIFY(!read_proc_stat(pid));
    QVERIFY(!read_proc_file(stat));
  }

  // A comm may hold spaces, parentheses and escape bytes (any user's process sets its own with prctl).
  void aStatLineIsReadPastItsName() {
    const auto s = parse_proc_stat("812 (evil) (\x1b[31m x) S 77 812 812 0 -1 4194560 1 0 0 0 25 7 0 0 20 0 1 0 4242 0");
    QVERIFY(s);
    QCOMPARE(s->comm, std::string("evil) (\x1b[31m x"));
    QCOMPARE(s->state, 'S');
    QCOMPARE(s->ppid, 77L);
    QCOMPARE(s->utime + s->stime, 32L);
    QCOMPARE(s->start_time, std::string("4242"));
    QVERIFY(!parse_proc_stat("812 (cut"));
    QCOMPARE(printable("evil) (\x1b[31m x\xff"), std::string("evil) (\\x1b[31m x\\xff"));
    QCOMPARE(printable("tokamak-engine café"), std::string("tokamak-engine café"));
    QCOMPARE(printable("caf\xc3\xa9\nline two", 5), std::string("caf\xc3\xa9\\x0a…"));
    // What a receiver that refuses bytes outside UTF-8 gets (D-Bus, a webhook's JSON, a kept playground try).
    QCOMPARE(utf8_repaired("caf\xe9 \xff ok \xe2\x82"), std::string("caf\xef\xbf\xbd \xef\xbf\xbd ok \xef\xbf\xbd\xef\xbf\xbd"));
    QCOMPARE(utf8_repaired("café"), std::string("café"));
  }

  // The rule for every output a user names (output_path.h).
  void anOutputNeverReplacesWhatItWasNotGiven() {
    QTemporaryDir dir;
    const OutputRule gguf{"the GGUF file", {".gguf"}, false, {}};
    // Nothing there: written.
    QVERIFY(error_of([&] { check_output_file(dir.filePath("new.gguf").toStdString(), gguf); }).isEmpty());
    // The run store, a checkpoint, whatever their names.
    const std::string store = write(dir, "store_copy.db", std::string("SQLite format 3\0rest", 20));
    QVERIFY2(error_of([&] { check_output_file(store, {"the GGUF file", {}, true, {}}); }).contains("is a run store"),
             qPrintable(error_of([&] { check_output_file(store, {"the GGUF file", {}, true, {}}); })));
    const std::string checkpoint = write(dir, "ck.gguf", std::string("\x10\0\0\0\0\0\0\0{\"a\":1}        ", 24));
    QVERIFY(error_of([&] { check_output_file(checkpoint, {"the GGUF file", {".gguf"}, true, {}}); })
                .contains("a checkpoint"));
    // What the command reads, by any name (a hard link).
    const std::string input = write(dir, "model.gguf", "old");
    const std::string other = dir.filePath("same.gguf").toStdString();
    QCOMPARE(::link(input.c_str(), other.c_str()), 0);
    QVERIFY(error_of([&] { check_output_file(other, {"the GGUF file", {".gguf"}, true, {input}}); })
                .contains("is what this command reads"));
    // A link, a FIFO, a device, a folder.
    const std::string link = dir.filePath("link.gguf").toStdString(), fifo = dir.filePath("fifo.gguf").toStdString();
    QCOMPARE(::symlink(input.c_str(), link.c_str()), 0);
    QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
    QVERIFY(error_of([&] { check_output_file(link, {"the GGUF file", {".gguf"}, true, {}}); }).contains("a symbolic link"));
    QVERIFY(error_of([&] { check_output_file(fifo, {"the GGUF file", {".gguf"}, true, {}}); }).contains("a FIFO"));
    QVERIFY(error_of([&] { check_output_file("/dev/null", {"the GGUF file", {}, true, {}}); }).contains("a device"));
    QVERIFY(error_of([&] { check_output_file(dir.path().toStdString(), {"the GGUF file", {}, true, {}}); })
                .contains("a folder"));
    // An earlier export of the kind: only when asked; a file of another kind: never.
    QVERIFY(error_of([&] { check_output_file(input, gguf); }).contains("pass --force"));
    QVERIFY(error_of([&] { check_output_file(input, {"the GGUF file", {".gguf"}, true, {}}); }).isEmpty());
    const std::string notes = write(dir, "notes.txt", "mine");
    QVERIFY(error_of([&] { check_output_file(notes, {"the GGUF file", {".gguf"}, true, {}}); })
                .contains("is not a .gguf file"));
    // A folder the command fills: empty or its own files only.
    QTemporaryDir hf;
    const std::vector<std::string> made = {"config.json", "model.safetensors"};
    QVERIFY(error_of([&] { check_output_folder(hf.path().toStdString(), made, {"the export", {}, false, {}}); }).isEmpty());
    write(hf, "config.json", "{}");
    QVERIFY(error_of([&] { check_output_folder(hf.path().toStdString(), made, {"the export", {}, false, {}}); })
                .contains("already holds"));
    QVERIFY(error_of([&] { check_output_folder(hf.path().toStdString(), made, {"the export", {}, true, {}}); }).isEmpty());
    write(hf, "thesis.tex", "years of work");
    QVERIFY(error_of([&] { check_output_folder(hf.path().toStdString(), made, {"the export", {}, true, {}}); })
                .contains("'thesis.tex'"));
    // Each file the folder export writes is a file output: --force never replaces what the command reads, a link,
    // a FIFO or a checkpoint among them; an earlier export's model.safetensors is its own kind and is replaced.
    QTemporaryDir hf2;
    const std::string folder = hf2.path().toStdString();
    const std::vector<std::string> five = {"config.json", "model.safetensors", "vocab.json"};
    const auto forced = [&](const std::vector<std::string>& inputs) {
      return error_of([&] { check_output_folder(folder, five, {"the export", {}, true, inputs}); });
    };
    const std::string model = write(hf2, "model.safetensors", safetensors_with(R"({"format":"pt"})"));
    QVERIFY2(forced({}).isEmpty(), qPrintable(forced({})));
    QVERIFY(forced({model}).contains("is what this command reads"));
    write(hf2, "model.safetensors", safetensors_with(R"({"format":"tokamak-checkpoint","run_uid":"u"})"));
    QVERIFY(forced({}).contains("is a checkpoint"));
    QCOMPARE(::unlink(model.c_str()), 0);
    QCOMPARE(::symlink(notes.c_str(), hf2.filePath("config.json").toLocal8Bit().constData()), 0);
    QVERIFY(forced({}).contains("is a symbolic link"));
    QCOMPARE(::unlink(hf2.filePath("config.json").toLocal8Bit().constData()), 0);
    QCOMPARE(::mkfifo(hf2.filePath("vocab.json").toLocal8Bit().constData(), 0600), 0);
    QVERIFY(forced({}).contains("is a FIFO"));
    QCOMPARE(read_file(notes), std::string("mine"));
  }

  // Slack's, Discord's and ntfy's URLs are the secret: the file is the user's alone and no message carries the path.
  void aWebhookSecretIsKept() {
    QTemporaryDir dir;
    qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());
    ::umask(022);
    NotifySettings s;
    s.webhook = "https://hooks.slack.com/services/T000/B000/SECRETTOKEN";
    write_notify_settings(s);
    struct stat file {}, folder {};
    QCOMPARE(::stat(notify_settings_path().c_str(), &file), 0);
    QCOMPARE(::stat(config_dir().c_str(), &folder), 0);
    QCOMPARE(file.st_mode & 0777, mode_t(0600));
    QCOMPARE(folder.st_mode & 0777, mode_t(0700));
    QCOMPARE(read_notify_settings().webhook, s.webhook);
    QCOMPARE(redacted_url(s.webhook), std::string("https://hooks.slack.com/…"));
    QCOMPARE(redacted_url("http://user:pw@127.0.0.1:9/x?token=1"), std::string("http://127.0.0.1:9/…"));
    // A refused send names the host, never the path.
    const std::string why = send_webhook("http://127.0.0.1:9/SECRETTOKEN?key=1", {"finished", "t", "b", "", "", 1});
    QVERIFY2(!why.empty() && !QString::fromStdString(why).contains("SECRET") && why.find("127.0.0.1") != std::string::npos,
             why.c_str());
    // Only http and https, in the settings, the dialog's test and the sender alike.
    for (const char* bad : {"file:///etc/hostname", "FILE:///etc/passwd", "dict://127.0.0.1:9/x", "https://", "gopher://x"}) {
      QVERIFY2(!webhook_problem(bad).empty(), bad);
      QVERIFY2(QString::fromStdString(send_webhook(bad, {"finished", "t", "b", "", "", 1})).contains("was not sent"), bad);
    }
    QVERIFY(webhook_problem("HTTPS://ntfy.sh/topic").empty());
    // A notice with bytes that are not UTF-8 (a Latin-1 file name in an error) fails softly, it never throws.
    const Notice latin1{"failed", "run caf\xe9", "cannot open /data/caf\xe9.txt", "", "", 3};
    QVERIFY(!send_webhook("http://127.0.0.1:9/hook", latin1).empty());
    qunsetenv("XDG_CONFIG_HOME");
  }

  // A URL that is malformed (a password holding '/', '?' or '#', a port that is not one) shows no part of it: the
  // host only where it parses, else the scheme alone.
  void aRedactedUrlShowsNoSecretHoweverItIsWritten() {
    const std::pair<const char*, const char*> shown[] = {
        {"http://user:SECRET/TOKEN@127.0.0.1:1/x", "http://…"},
        {"http://user:1234#SECRET@host/x", "http://…"},
        {"http://user:SECRET?TOKEN@host/x", "http://…"},
        {"http://user:SECRET@host:SECRET/x", "http://…"},
        {"http://a:SECRET@b:TOKEN@host/", "http://host/…"},
        {"https://SECRET@hooks.slack.com/services/TOKEN", "https://hooks.slack.com/…"},
        {"https://ntfy.sh?SECRET#TOKEN", "https://ntfy.sh/…"},
        {"https://ntfy.sh#SECRET", "https://ntfy.sh/…"},
        {"http://[::1]:8080/SECRET", "http://[::1]:8080/…"},
        {"http://[SECRET]/x", "http://…"},
        {"http://host:99999999/SECRET", "http://…"},
        {"http://SECRET\x01TOKEN/x", "http://…"},
        {"http://SECRET TOKEN/x", "http://…"},
        {"http://", "http://…"},
        {"ht tp://SECRET/x", "…"},
        {"SECRET-TOKEN", "…"},
        {"://SECRET", "…"},
    };
    for (const auto& [url, want] : shown) {
      const std::string got = redacted_url(url);
      QVERIFY2(got.find("SECRET") == std::string::npos && got.find("TOKEN") == std::string::npos &&
                   got.find("1234") == std::string::npos,
               (std::string(url) + " -> " + got).c_str());
      QVERIFY2(got == want, (std::string(url) + " -> " + got + ", not " + want).c_str());
    }
  }

  // notifications.json written by hand (the docs show one) is 0644 under the usual umask: once it holds a webhook,
  // reading it makes it and its folder the user's alone; without one it is left as it is.
  void aHandWrittenWebhookFileIsMadePrivate() {
    QTemporaryDir dir;
    qputenv("XDG_CONFIG_HOME", dir.filePath("config").toUtf8());
    make_dirs(config_dir());
    const std::string path = notify_settings_path();
    write_file_atomically(path, "{\"desktop\": false}");
    QCOMPARE(::chmod(path.c_str(), 0644), 0);
    QVERIFY(read_notify_settings().webhook.empty());
    struct stat st {};
    QCOMPARE(::stat(path.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0644));
    write_file_atomically(path, "{\"webhook\": \"https://ntfy.sh/SECRET\"}");
    QCOMPARE(::chmod(path.c_str(), 0644), 0);
    QCOMPARE(::chmod(config_dir().c_str(), 0755), 0);
    QCOMPARE(read_notify_settings().webhook, std::string("https://ntfy.sh/SECRET"));
    QCOMPARE(::stat(path.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    // Its folder too (the user's): an editor's backup beside the file would be readable in a 0755 one.
    QCOMPARE(::stat(config_dir().c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0700));
    qunsetenv("XDG_CONFIG_HOME");
  }

  // A run's process leads a group of its own: when it has ended but a process of its group lives on (a rank the
  // stall's SIGKILL could not end), the run is alive; once that one has ended too, it is not.
  void aRunIsAliveWhileItsGroupIs() {
    QTemporaryDir dir;
    const RunFolder f{dir.path().toStdString()};
    int go[2];
    QCOMPARE(::pipe(go), 0);
    const pid_t leader = ::fork();
    if (leader == 0) {
      ::setpgid(0, 0);
      if (::fork() == 0) {  // the rank that lives on, in the leader's group
        ::pause();
        ::_exit(0);
      }
      char c;
      (void)!::read(go[0], &c, 1);
      ::_exit(0);
    }
    ::setpgid(leader, leader);  // whichever of the two runs first
    // A check that fails returns at once: the group is ended all the same, or its sleeper outlives the suite.
    const std::unique_ptr<void, std::function<void(void*)>> ender(&go, [leader](void*) { ::kill(-leader, SIGKILL); });
    ::close(go[0]);
    write_pid_file(f, leader);
    QVERIFY(run_process_alive(f));
    QCOMPARE(::write(go[1], "x", 1), ssize_t(1));
    ::close(go[1]);
    QCOMPARE(::waitpid(leader, nullptr, 0), leader);
    QVERIFY(!read_proc_stat(leader));  // the leader is gone, reaped
    QVERIFY(run_process_alive(f));
    QCOMPARE(::kill(-leader, SIGKILL), 0);
    // Its reaper is init (a container's may never reap it): a zombie of the group is no process that lives on.
    QTRY_VERIFY_WITH_TIMEOUT(!run_process_alive(f), test::kPatienceMs);
    QVERIFY(!process_group_alive(leader));
  }

  // A notice is posted, never waited on: the poster goes on while the send is still out, the queue is bounded, and
  // the end waits a bounded time, then gives up what is left and says so.
  void aNoticeNeverHoldsUpItsPoster() {
    Gate gate;
    std::atomic<int> aborted_seen{0};
    NoticeQueue q(
        [&](const Notice&, const std::atomic<bool>& aborted) {
          gate.wait();
          if (aborted) ++aborted_seen;
          return std::string();
        },
        3, 120);
    QVERIFY(q.post({"spike", "a", "b", "", "", 1}));
    QVERIFY(gate.wait_entered(1));
    QCOMPARE(q.pending(), size_t(1));  // posted, and still being sent: the poster was not held
    for (int i = 0; i < 3; ++i) QVERIFY(q.post({"spike", "a", "b", "", "", 2 + i}));
    QVERIFY(!q.post({"spike", "a", "b", "", "", 9}));  // three queued behind the one in flight: the fourth is dropped
    QCOMPARE(q.dropped(), size_t(1));
    std::thread opener([&] {
      // Lets the sends go only once the end has given up on them: the abort must reach the send in flight.
      while (q.last_failure().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      gate.release();
    });
    q.finish(0.2);
    opener.join();
    QVERIFY2(QString::fromStdString(q.last_failure()).startsWith("4 notices were still being sent"),
             q.last_failure().c_str());
    QCOMPARE(aborted_seen.load(), 1);
    QCOMPARE(q.sent(), size_t(1));
    QCOMPARE(q.dropped(), size_t(4));
    QVERIFY(!q.post({"finished", "a", "b", "", "", 9}));  // finished: nothing more is taken
  }

  // A sender that throws costs its notice only, never the thread or the run.
  void aSenderThatThrowsIsAFailure() {
    NoticeQueue q([](const Notice&, const std::atomic<bool>&) -> std::string { throw std::runtime_error("boom"); });
    QVERIFY(q.post({"finished", "a", "b", "", "", 1}));
    q.finish(test::kPatienceMs / 1000.0);
    QCOMPARE(q.last_failure(), std::string("boom"));
    QCOMPARE(q.sent(), size_t(1));
  }

  // Three of five seeds failed: the survivors' numbers are shown, "2 of 5" beside them, and never "resolved".
  void aVerdictCountsEverySeed() {
    const double nan = std::nan("");
    const auto v = welch_verdict({3.01, 3.02, 3.00, 3.03}, {2.50, 2.51, nan, nan, nan});
    QVERIFY(v && v->tested && !v->resolved && v->high < 0);  // the interval alone would say "resolved"
    QCOMPARE(v->n_b, 2);
    QCOMPARE(v->total_b, 5);
    QCOMPARE(missing_b(*v), 3);
    const QString text = QString::fromStdString(verdict_text(*v));
    QVERIFY2(text.contains("runs 4 of 4 and 2 of 5") && text.contains("3 runs have no value") &&
                 text.endsWith("would bias it)"),
             qPrintable(text));
    // Runs that never reached the target are censored, not dropped.
    const auto t = welch_verdict({100, 104, 98}, {50, 52, kInf, kInf});
    QVERIFY(t && !t->resolved);
    QCOMPARE(t->censored_b, 2);
    QVERIFY2(QString::fromStdString(verdict_text(*t)).contains("2 runs never reached the target (censored"),
             verdict_text(*t).c_str());
    // One value left: no test, still said with its count.
    const auto one = welch_verdict({3200, 3210}, {3500, nan});
    QVERIFY(one && !one->tested && !one->resolved);
    QVERIFY2(QString::fromStdString(verdict_text(*one)).contains("runs 2 of 2 and 1 of 2"), verdict_text(*one).c_str());
  }

  // The scoreboard: a group with failed members says so, a run that never reached the target counts against its group,
  // and a group of one is named with why it has no verdict.
  void theScoreboardSaysWhoIsMissing() {
    std::vector<ScoreInput> in;
    std::vector<GroupInput> groups;
    const auto add = [&](const std::string& name, double tok_s, double loss, double ttt) {
      ScoreInput s;
      s.label = "#" + std::to_string(in.size() + 1) + " " + name;
      s.tok_s = {tok_s, tok_s, tok_s};
      s.final_val_loss = loss;
      s.target = 3.0;
      s.time_to_target_s = ttt;
      in.push_back(s);
      groups.push_back({name, {name.substr(0, 1)}, "{}"});
    };
    const double nan = std::nan("");
    for (int i = 0; i < 4; ++i) add("A" + std::to_string(i), 3200 + i * 10, 3.01 + i * 0.01, 100 + i);
    for (int i = 0; i < 5; ++i) add("B" + std::to_string(i), 3600 + i * 10, i < 2 ? 2.5 + i * 0.01 : nan, i < 2 ? 50 + i : nan);
    add("D0", 3000, 3.2, nan);
    Scoreboard b = build_scoreboard(in, 0);
    add_group_rows(b, group_runs(groups, parse_group_spec("tag")));
    QCOMPARE(b.groups.size(), size_t(2));
    const ScoreGroup& g = b.groups[1];
    QCOMPARE(g.complete, 2);
    QVERIFY(g.val_loss_verdict && !g.val_loss_verdict->resolved);
    QVERIFY(g.target_verdict && !g.target_verdict->resolved);
    QCOMPARE(g.target_verdict->censored_b, 3);
    QVERIFY(g.tok_s_verdict && g.tok_s_verdict->resolved);  // every B run has its tok/s: that verdict stands
    QCOMPARE(b.single_groups.size(), size_t(1));
    const std::string text = format_scoreboard_text(b);
    QVERIFY2(text.find("2 of 5") != std::string::npos, text.c_str());
    QVERIFY2(text.find("groups of one run, with no row and no verdict (a group needs 2 runs or more): D ×1 (#10)") !=
                 std::string::npos,
             text.c_str());
  }
};

QTEST_GUILESS_MAIN(TestReliability)
#include "test_reliability.moc"
