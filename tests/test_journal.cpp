// The run journal and run folders without a run (engine/base/run, engine/base/store/journal_ingest): whole lines
// only, a full disk refused cleanly, control commands kept in order, a store that records each journal line
// once however often a stretch is read, ssh command lines and the one-line meaning of ssh's failures.
#include <QtTest>

#include <unistd.h>

#include "engine/fleet/remote/host_json.h"
#include "engine/fleet/remote/ssh_command.h"
#include "engine/base/run/control_file.h"
#include "engine/base/run/journal.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/journal_ingest.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"

using namespace tokamak;

namespace {

// A small journal as a run writes it: progress before the start, then start, steps, a sample, the end.
std::vector<std::string> journalLines(const std::string& uid) {
  return {
      R"({"event":"progress","what":"tokenizing x","done":1,"total":1})",
      R"({"event":"start","run_uid":")" + uid +
          R"(","name":"j","n_params":10,"device":"cpu","world_size":1,"start_step":0,"steps":3,"host":"gpu1","config":{}})",
      R"({"event":"step","step":1,"tokens":64,"wall_s":0.1,"loss":10.5,"lr":0.001,"tok_s":640})",
      R"({"event":"step","step":2,"tokens":128,"wall_s":0.2,"loss":10.1,"lr":0.001,"tok_s":640})",
      R"({"event":"sample","step":2,"prompt":"A","text":"A b c"})",
      R"({"event":"checkpoint","step":3,"path":"/x/step_3.safetensors"})",
      R"({"event":"step","step":3,"tokens":192,"wall_s":0.3,"loss":9.9,"lr":0.001,"tok_s":640})",
      R"({"event":"end","status":"finished","step":3,"tokens":192,"wall_s":0.3,"error":""})",
  };
}

}  // namespace

class TestJournal : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void appendsWholeLinesAndReadsFromOffsets() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("events.jsonl").toStdString();
    {
      JournalWriter w(path);
      QVERIFY(w.append(R"({"event":"a"})"));
      QVERIFY(w.append(R"({"event":"b"})"));
    }
    uint64_t next = 0;
    auto lines = read_journal(path, 0, &next);
    QCOMPARE(lines.size(), size_t(2));
    QCOMPARE(QString::fromStdString(lines[1].text), QString(R"({"event":"b"})"));
    QCOMPARE(next, uint64_t(28));
    QCOMPARE(lines[0].end, uint64_t(14));
    // From the middle of the file: exactly the second line, with the same end offset.
    auto rest = read_journal(path, lines[0].end, &next);
    QCOMPARE(rest.size(), size_t(1));
    QCOMPARE(rest[0].end, uint64_t(28));
    // A line being written (no newline yet) is not read; the offset stays before it.
    {
      FILE* f = std::fopen(path.c_str(), "a");
      std::fputs(R"({"event":"c")", f);
      std::fclose(f);
    }
    auto partial = read_journal(path, next, &next);
    QVERIFY(partial.empty());
    QCOMPARE(next, uint64_t(28));
    uint64_t elsewhere = 0;
    QVERIFY(read_journal(dir.filePath("missing").toStdString(), 0, &elsewhere).empty());
    // That line was cut by a kill: the next segment's writer ends it, so the segment's first line (its start)
    // reads whole instead of being glued to the fragment.
    {
      JournalWriter w(path);
      QVERIFY(w.append(R"({"event":"start"})"));
    }
    auto resumed = read_journal(path, next, &next);
    QCOMPARE(resumed.size(), size_t(2));
    QCOMPARE(QString::fromStdString(resumed[0].text), QString(R"({"event":"c")"));
    QCOMPARE(QString::fromStdString(resumed[1].text), QString(R"({"event":"start"})"));
  }

  void fullDiskIsOneClearErrorAndNoMoreWrites() {
    // /dev/full answers every write with ENOSPC, as a full disk does.
    QTemporaryDir dir;
    const QString link = dir.filePath("events.jsonl");
    QVERIFY(QFile::link("/dev/full", link));
    JournalWriter w(link.toStdString());
    QVERIFY(!w.append(R"({"event":"step"})"));
    QVERIFY(w.disk_full());
    QVERIFY2(QString::fromStdString(w.error()).contains("disk is full"), w.error().c_str());
    QVERIFY(!w.append(R"({"event":"step"})"));  // refused at once, no second attempt
  }

  void unwritableJournalNamesTheFile() {
    const QString e = test::error_of([] { JournalWriter w("/proc/no-such-dir/events.jsonl"); });
    QVERIFY2(e.contains("/proc/no-such-dir/events.jsonl") && e.contains("hint"), qPrintable(e));
  }

  void controlCommandsKeepTheirOrder() {
    QTemporaryDir dir;
    const std::string c = dir.path().toStdString();
    write_control_command(c, "pause");
    write_control_command(c, "resume");
    write_control_command(c, "stop");
    auto taken = take_control_commands(c);
    QCOMPARE(taken, (std::vector<std::string>{"pause", "resume", "stop"}));
    QVERIFY(take_control_commands(c).empty());  // each taken once
    QVERIFY(is_control_command("sample") && !is_control_command("explode"));
    const QString e = test::error_of([&] { write_control_command(c + "/nope", "stop"); });
    QVERIFY2(e.contains("control folder"), qPrintable(e));
  }

  void runFolderStates() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string uid = new_run_uid();
    QCOMPARE(uid.size(), size_t(16));
    RunFolder f{run_folder_path("my run/../x", uid)};
    QVERIFY2(f.path.find(data_dir() + "/checkpoints/") == 0 && f.path.find("/../") == std::string::npos,
             f.path.c_str());
    create_run_folder(f, {uid, "my run", "h", f.path, now_seconds()});
    QCOMPARE(QString::fromStdString(find_run_folder(uid.substr(0, 6)).path), QString::fromStdString(f.path));
    QCOMPARE(QString::fromStdString(find_run_folder(f.path).path), QString::fromStdString(f.path));
    QVERIFY(test::error_of([] { find_run_folder("ffffffffffff"); }).contains("runs list --json"));
    // This process as the owner: running, then paused; a dead owner without an exit file: crashed.
    write_pid_file(f, ::getpid());
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("running"));
    write_file_atomically(f.paused_file(), "");
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("paused"));
    write_file_atomically(f.pid_file(), "999999999 1\n");
    write_file_atomically(f.output_log(), "step 1\ntokamak: out of memory (hint: smaller batch)\nKilled\n");
    RunState s = read_run_state(f);
    QCOMPARE(QString::fromStdString(s.state), QString("crashed"));
    QCOMPARE(QString::fromStdString(s.error), QString("tokamak: out of memory (hint: smaller batch)"));
    write_exit_file(f, "stopped", 0, "");
    QCOMPARE(QString::fromStdString(read_run_state(f).state), QString("stopped"));
    // A pid file whose start time is not the process's (a reused pid) is not the owner.
    write_file_atomically(f.pid_file(), std::to_string(::getpid()) + " 1\n");
    QVERIFY(!run_process_alive(f));
    QCOMPARE(list_run_folders().size(), size_t(1));
  }

  void ingestRecordsEachLineOnceHoweverItIsRead() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string db = env.path("local.db"), uid = "00112233aabbccdd";
    const auto text = journalLines(uid);
    std::vector<JournalLine> lines;
    uint64_t end = 0;
    for (const std::string& t : text) lines.push_back({t, end += t.size() + 1});
    RunStore store(db);
    {
      JournalIngest in(store, uid, "ssh:gpu1");
      QCOMPARE(in.resume_offset(), uint64_t(0));
      // Only the progress line: no run yet, and the offset stays at 0 (the line is read again later).
      QCOMPARE(in.ingest({lines[0]}), 1);
      QCOMPARE(in.resume_offset(), uint64_t(0));
      // Lines 0-4, then 2-6 again (a reader that re-read an overlapping stretch), then everything.
      in.ingest({lines.begin(), lines.begin() + 5});
      QCOMPARE(in.resume_offset(), lines[4].end);
      QCOMPARE(in.ingest({lines.begin() + 2, lines.begin() + 7}), 2);
    }
    // A new reader (the studio restarted) resumes where the store says and takes only the end.
    JournalIngest again(store, uid, "ssh:gpu1");
    QCOMPARE(again.resume_offset(), lines[6].end);
    QCOMPARE(again.ingest(lines), 1);
    QCOMPARE(QString::fromStdString(again.ended()), QString("finished"));
    QCOMPARE(again.ingest(lines), 0);
    const int64_t id = store.find_uid(uid);
    QVERIFY(id > 0);
    QCOMPARE(store.metrics(id).size(), size_t(3));
    QCOMPARE(store.samples(id).size(), size_t(1));
    QCOMPARE(store.checkpoints(id).size(), size_t(1));
    RunInfo r = store.run(id);
    QCOMPARE(QString::fromStdString(r.status), QString("finished"));
    QCOMPARE(QString::fromStdString(r.host), QString("gpu1"));
    QCOMPARE(store.metrics(id)[1]["train_loss"], 10.1);
  }

  void remoteRunsAreNotMarkedCrashedByTheirSilence() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    const std::string db = env.path("local.db"), uid = "0123456789abcdef";
    {
      RunStore store(db);
      JournalIngest in(store, uid, "ssh:gpu1");
      const auto text = journalLines(uid);
      in.ingest({{text[1], 300}});
    }
    StoreOptions o;
    o.stale_after_s = -1;  // every heartbeat is stale
    RunStore reopened(db, RunStore::Mode::existing, o);
    QCOMPARE(QString::fromStdString(reopened.run(reopened.find_uid(uid)).status), QString("running"));
  }

  void sshTargetsAndCommandLines() {
    SshTarget t = parse_ssh_target("me@gpu.example.org:2222");
    QCOMPARE(QString::fromStdString(t.user), QString("me"));
    QCOMPARE(QString::fromStdString(t.host), QString("gpu.example.org"));
    QCOMPARE(t.port, 2222);
    QCOMPARE(QString::fromStdString(parse_ssh_target("gpu1").spec()), QString("gpu1"));
    for (const char* bad : {"", "me@", "host:x", "host:70000", "-oProxyCommand=x", "a b", "h;rm"})
      QVERIFY2(test::error_of([&] { parse_ssh_target(bad); }).contains("not an SSH host"), bad);
    SshOptions o;
    o.control_dir = "/tmp/c", o.known_hosts = "/tmp/kh", o.identity = "/tmp/key";
    auto argv = ssh_argv(t, o, {"tokamak", "runs", "follow", "ab cd", "--from", "0"});
    QStringList a;
    for (const auto& w : argv) a << QString::fromStdString(w);
    QVERIFY(a.contains("BatchMode=yes"));
    QVERIFY(a.contains("ControlPath=/tmp/c/%C"));
    QVERIFY(a.contains("UserKnownHostsFile=/tmp/kh"));
    QVERIFY(a.contains("ServerAliveInterval=5"));
    QCOMPARE(a.mid(a.indexOf("-p"), 2), (QStringList{"-p", "2222"}));
    QCOMPARE(a.last(), QString("tokamak runs follow 'ab cd' --from 0"));
    QCOMPARE(QString::fromStdString(shell_quote("it's")), QString("'it'\\''s'"));
    auto close = ssh_close_argv(t, o);
    QVERIFY(std::find(close.begin(), close.end(), "exit") != close.end());
  }

  void sshFailuresAreOneLineWithTheFix() {
    SshTarget t = parse_ssh_target("me@gpu1");
    auto d = [&](int code, const char* err) { return QString::fromStdString(describe_ssh_failure(t, code, err)); };
    QVERIFY(d(255, "ssh: connect to host gpu1 port 22: Connection refused").contains("connection refused"));
    QVERIFY(d(255, "me@gpu1: Permission denied (publickey).").contains("ssh-copy-id"));
    QVERIFY(d(255, "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.")
                .contains("ssh-keygen -R gpu1"));
    QVERIFY(d(127, "bash: line 1: tokamak: command not found").contains("not installed on me@gpu1"));
    QVERIFY(d(127, "bash: line 1: /opt/t/tokamak: No such file or directory").contains("not installed on me@gpu1"));
    // The host's tokamak saying that a path it was given is missing is that, not a missing Tokamak.
    const char* missing = "tokamak: cannot read '/data/x.json': No such file or directory (hint: check the path)";
    QCOMPARE(d(1, missing), QString(missing));
    QCOMPARE(d(1, "step 3\ntokamak: run x failed: out of memory\n"), QString("tokamak: run x failed: out of memory"));
    for (const QString& line : {d(255, "a\nb\n"), d(127, "")}) QVERIFY(!line.contains('\n'));
  }

  // A host's tokamak of another version may print a result with fields of other types: read with unchecked
  // get<>, that was "tokamak: [json.exception.type_error.302] ..." with no host and no hint.
  void hostResultsOfAnotherShapeAreOneLine() {
    const nlohmann::json r = nlohmann::json::parse(R"({"path": "/d", "files": "3", "bytes": -1, "step": 2.5})");
    QCOMPARE(host_field<std::string>(r, "path", "me@gpu1"), std::string("/d"));
    for (const char* key : {"files", "bytes", "step", "tokens"}) {
      const QString e = test::error_of([&] {
        if (std::string(key) == "step") host_field<int64_t>(r, key, "me@gpu1");
        else host_field<uint64_t>(r, key, "me@gpu1");
      });
      QVERIFY2(e.startsWith("tokamak on me@gpu1 printed a result this version cannot read (") && e.contains(key) &&
                   e.contains("hint:") && !e.contains('\n'),
               qPrintable(e));
    }
  }

  void sshConfigHosts() {
    const std::string cfg =
        "# mine\nHost gpu1 gpu2\n  HostName 10.0.0.1\nHost *.corp !bad\nhost=lab\nMatch all\nHost gpu1 # again\n";
    QCOMPARE(ssh_config_hosts(cfg), (std::vector<std::string>{"gpu1", "gpu2", "lab"}));
  }
};

QTEST_GUILESS_MAIN(TestJournal)
#include "test_journal.moc"
