// The queue and sweeps through the real CLI: `tokamak queue` keeps order, reorder, removal and pause in the run
// store and its detached worker runs the queue in that order, one at a time; a worker killed with SIGKILL is
// replaced by a new one that watches the run already going instead of starting it again; a bad sweep file is
// refused in one line with nothing queued; and a learning-rate sweep with ASHA on the tiny model stops the
// worst trials at each rung while a promoted trial's curve is continuous and bit-equal to the same config
// trained straight through.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "engine/torch/checkpoint/checkpoint.h"
#include "engine/base/config/config.h"
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

// The queue as `queue list --json` shows it; a list that failed (a loaded machine: the store busy, the command
// late) is an empty object, which no check below reads as settled.
QJsonObject queueList() {
  const test::CliResult r = test::run_tokamak({"queue", "list", "--json"});
  if (r.code != 0) {
    qWarning("queue list failed (exit %d): %s", r.code, r.err.constData());
    return {};
  }
  return r.json();
}

// The runs these tests queue: the tiny model on a corpus excerpt, threads=1, a step reported every step.
QStringList addArgs(const std::string& data, int steps, const QString& name) {
  return QStringList{"queue", "add", "--json", "--name", name} + test::set_args(test::quiet_run_overrides(data, steps));
}

int64_t addRun(const std::string& data, int steps, const QString& name) {
  const test::CliResult r = test::run_tokamak(addArgs(data, steps, name));
  if (r.code != 0) qWarning("queue add failed: %s", r.err.constData());
  return r.json()["id"].toInteger();
}

QJsonObject itemOf(int64_t id) {
  for (const QJsonValue& v : queueList()["items"].toArray())
    if (v.toObject()["id"].toInteger() == id) return v.toObject();
  return {};
}

// The worker's pid, 0 when none works, -1 when the list failed.
qint64 workerPid() {
  const QJsonObject list = queueList();
  return list.contains("items") ? list["worker_pid"].toInteger() : -1;
}

// Settled: nothing queued or running, and the worker gone. Rows alone are not enough: a trial that halted at a
// rung is "stopped" for a moment before its worker promotes it back into the queue.
bool queueSettled() {
  const QJsonObject list = queueList();
  if (!list.contains("items") || list["worker_pid"].toInteger() != 0) return false;
  for (const QJsonValue& v : list["items"].toArray()) {
    const QString s = v.toObject()["state"].toString();
    if (s == "queued" || s == "running") return false;
  }
  return true;
}

QByteArray journalOf(const QJsonObject& item) {
  QFile f(item["folder"].toString() + "/events.jsonl");
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

std::vector<QJsonObject> events(const QByteArray& journal, const QString& kind) {
  std::vector<QJsonObject> out;
  for (const QByteArray& line : journal.split('\n')) {
    const QJsonObject o = QJsonDocument::fromJson(line).object();
    if (o["event"].toString() == kind) out.push_back(o);
  }
  return out;
}

// A metric as ASHA ranks it: NaN (diverged, failed) after everything.
double rank_key(const QJsonValue& v) { return v.isDouble() ? v.toDouble() : INFINITY; }

}  // namespace

class TestQueue : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;

 private Q_SLOTS:
  void init() { env_ = std::make_unique<test::ScratchEnv>(); }
  void cleanup() {
    const qint64 worker = workerPid();
    if (worker > 0) ::kill(static_cast<pid_t>(worker), SIGKILL);
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    env_.reset();
  }

  void queueRunsInItsOrderAfterReorderRemovalAndPause() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    QCOMPARE(test::run_tokamak({"queue", "pause"}).code, 0);
    const int64_t a = addRun(data, 6, "a"), b = addRun(data, 6, "b"), c = addRun(data, 6, "c");
    QVERIFY(a > 0 && b > 0 && c > 0);
    QCOMPARE(test::run_tokamak({"queue", "move", QString::number(c), "--to", "0"}).code, 0);
    QCOMPARE(test::run_tokamak({"queue", "remove", QString::number(b)}).code, 0);
    QJsonObject list = queueList();
    QVERIFY(list["paused"].toBool());
    QJsonArray items = list["items"].toArray();
    QCOMPARE(items.size(), 2);  // removed items are not listed
    QCOMPARE(items[0].toObject()["name"].toString(), QString("c"));
    QCOMPARE(items[1].toObject()["name"].toString(), QString("a"));
    // Paused: whatever worker `add` started has nothing to start.
    for (const QJsonValue& v : items) QCOMPARE(v.toObject()["state"].toString(), QString("queued"));
    test::CliResult bad = test::run_tokamak({"queue", "move", QString::number(b), "--to", "0"});
    QVERIFY2(bad.code == 1 && bad.err.contains("is removed, not queued") && bad.err.count('\n') == 1,
             bad.err.constData());
    bad = test::run_tokamak({"queue", "add", "--set", "train.stepz=3"});
    QVERIFY2(bad.code == 1 && bad.err.contains("did you mean 'train.steps'"), bad.err.constData());
    // Unnamed, it is named as `tokamak train` names a run: for what it will train here, never after `auto`.
    const test::CliResult unnamed = test::run_tokamak(
        QStringList{"queue", "add", "--json"} +
        test::set_args(test::quiet_run_overrides(data, 2)) + QStringList{"--set", "speed.precision=fp32"});
    QVERIFY2(unnamed.code == 0, unnamed.err.constData());
    const QJsonObject added = QJsonDocument::fromJson(unnamed.out.trimmed()).object();
    const QString name = added["name"].toString();
    QVERIFY2(name.contains("-fp32-") && name.contains("-fused-") && !name.contains("auto"), qPrintable(name));
    QCOMPARE(test::run_tokamak({"queue", "remove", QString::number(added["id"].toInteger())}).code, 0);

    QCOMPARE(test::run_tokamak({"queue", "resume"}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 4 * test::kPatienceMs);
    const QJsonObject ic = itemOf(c), ia = itemOf(a);
    QCOMPARE(ic["state"].toString(), QString("done"));
    QCOMPARE(ia["state"].toString(), QString("done"));
    // One at a time, in the queue's order: a started when c had ended.
    QVERIFY(ia["started"].toDouble() >= ic["ended"].toDouble());
    QVERIFY(itemOf(b).isEmpty());
    // Ordinary runs: their folder's journal ran to the end, and the run store has them.
    QCOMPARE(int(events(journalOf(ia), "step").size()), 6);
    test::CliResult runs = test::run_tokamak({"runs", "show", ia["run_uid"].toString()});
    QVERIFY2(runs.code == 0 && runs.out.contains("finished"), runs.err.constData());
  }

  // An older version made the worker's log 0644; it may name webhooks, so the worker that opens it makes it 0600.
  void anOlderWorkersReadableLogIsMadePrivate() {
    QVERIFY(env_->ok());
    const std::string log = data_dir() + "/queue-worker.log";
    make_dirs(data_dir());
    write_file_atomically(log, "an older worker's line\n");
    QVERIFY(::chmod(log.c_str(), 0644) == 0);
    QVERIFY(addRun(env_->corpus_excerpt(20000), 2, "short") > 0);
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 4 * test::kPatienceMs);
    struct stat st {};
    QCOMPARE(::stat(log.c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, mode_t(0600));
    QVERIFY(QString::fromStdString(read_file(log)).startsWith("an older worker's line\n"));
  }

  void aKilledWorkerIsReplacedAndTheRunIsNotStartedTwice() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    QCOMPARE(test::run_tokamak({"queue", "pause"}).code, 0);
    const int64_t a = addRun(data, 1000000, "long"), b = addRun(data, 4, "after");
    QCOMPARE(test::run_tokamak({"queue", "resume"}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(events(journalOf(itemOf(a)), "step").size() > 0, test::kPatienceMs);
    const QString uid = itemOf(a)["run_uid"].toString();
    // Paused by hand, so the run is surely going (not ended) while its worker dies and another comes.
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "pause"}).code, 0);
    QTRY_COMPARE_WITH_TIMEOUT(itemOf(a)["run_state"].toString(), QString("paused"), test::kPatienceMs);
    const qint64 worker = workerPid();
    QVERIFY(worker > 0);
    QCOMPARE(::kill(static_cast<pid_t>(worker), SIGKILL), 0);
    QTRY_COMPARE_WITH_TIMEOUT(workerPid(), qint64(0), test::kPatienceMs);
    QCOMPARE(itemOf(a)["run_state"].toString(), QString("paused"));  // the run outlived its worker

    QCOMPARE(test::run_tokamak({"queue", "resume"}).code, 0);  // a new worker
    QTRY_VERIFY_WITH_TIMEOUT(workerPid() > 0 && workerPid() != worker, test::kPatienceMs);
    QCOMPARE(itemOf(a)["state"].toString(), QString("running"));
    QCOMPARE(itemOf(b)["state"].toString(), QString("queued"));  // one at a time: the adopted run counts
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 4 * test::kPatienceMs);
    const QJsonObject ia = itemOf(a), ib = itemOf(b);
    QCOMPARE(ia["run_uid"].toString(), uid);
    QCOMPARE(int(events(journalOf(ia), "start").size()), 1);  // started once, by the first worker
    QCOMPARE(ia["state"].toString(), QString("stopped"));
    QCOMPARE(ib["state"].toString(), QString("done"));
    QVERIFY(ib["started"].toDouble() >= ia["ended"].toDouble());
  }

  // A run of the queue that stops stepping (its engine stopped with SIGSTOP) is called stalled by the worker,
  // ended after health.stall_requeue_minutes and queued again at the front, to resume from its newest checkpoint
  // as the same run, which trains on; `queue list` shows a running item's step and time left.
  void aStalledRunIsEndedAndQueuedAgain() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    const test::CliResult added = test::run_tokamak(
        QStringList{"queue", "add", "--json", "--name", "stalls"} +
        test::set_args(test::quiet_run_overrides(data, 1000000,
                                                 {"health.stall_factor=3", "health.stall_min_s=2",
                                                  "health.stall_requeue_minutes=0.1", "checkpoint.every=5"})));
    QVERIFY2(added.code == 0, added.err.constData());
    const int64_t a = added.json()["id"].toInteger();
    QTRY_VERIFY_WITH_TIMEOUT(!events(journalOf(itemOf(a)), "checkpoint").empty() &&
                                 events(journalOf(itemOf(a)), "step").size() >= 8,
                             test::kPatienceMs);
    const QJsonObject running = itemOf(a);
    QVERIFY2(running["step"].toInteger() >= 8 && running.contains("eta_s"), QJsonDocument(running).toJson().constData());
    const test::CliResult listed = test::run_tokamak({"queue", "list"});
    QVERIFY2(listed.out.contains(" left"), listed.out.constData());
    const QString uid = running["run_uid"].toString();
    const pid_t pid = static_cast<pid_t>(read_pid(RunFolder{running["folder"].toString().toStdString()}));
    QVERIFY(pid > 0);
    QCOMPARE(::kill(pid, SIGSTOP), 0);
    // Stalled after max(3 × its pace, 2 s), ended 6 s later, started again: a second segment in the same journal.
    QTRY_VERIFY_WITH_TIMEOUT(events(journalOf(itemOf(a)), "start").size() == 2, 4 * test::kPatienceMs);
    const std::vector<QJsonObject> starts = events(journalOf(itemOf(a)), "start");
    QVERIFY2(starts.back()["start_step"].toInteger() >= 5, QJsonDocument(starts.back()).toJson().constData());
    // It trains again (a step past its checkpoint), then is stopped by hand: the row ends stopped, not failed.
    const qint64 resumed_at = starts.back()["start_step"].toInteger();
    QTRY_VERIFY_WITH_TIMEOUT(events(journalOf(itemOf(a)), "step").back()["step"].toInteger() > resumed_at,
                             test::kPatienceMs);
    QCOMPARE(itemOf(a)["state"].toString(), QString("running"));
    QCOMPARE(test::run_tokamak({"runs", "control", uid, "stop"}).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 4 * test::kPatienceMs);
    const QJsonObject done = itemOf(a);
    QCOMPARE(done["state"].toString(), QString("stopped"));
    QCOMPARE(done["run_uid"].toString(), uid);  // the same run went on
    const QString log = QString::fromStdString(read_file(data_dir() + "/queue-worker.log"));
    QVERIFY2(log.contains(QString("queue item %1 (stalls) stalled: no step for").arg(a)), qPrintable(log));
    QVERIFY2(log.contains("ended and queued again (1 of 3), to resume from"), qPrintable(log));
    QCOMPARE(done["requeues"].toInteger(), qint64{1});  // kept in the row: a restarted worker keeps the limit
    QVERIFY(!QFileInfo(QString::fromStdString(data_dir() + "/queue-worker.log")).permissions().testFlag(QFileDevice::ReadOther));
  }

  void aBadSweepFileQueuesNothing() {
    QVERIFY(env_->ok());
    const std::string file = env_->path("bad.json");
    write_file_atomically(file, R"({"sweep": {"optimizer.lr": [1e-3, 2e-3], "opt.optimiser": ["adamw", "muon"]}})");
    test::CliResult r = test::run_tokamak({"sweep", QString::fromStdString(file)});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err.contains("unknown config key 'opt.optimiser'") && r.err.contains("did you mean 'optimizer.name'"),
             r.err.constData());
    QCOMPARE(r.err.count('\n'), 1);
    write_file_atomically(file, R"({"sweep": {"optimizer.lr": [1e-3, 2e-3], "schedule.warmup_steps": [10, -5]}})");
    r = test::run_tokamak({"sweep", QString::fromStdString(file)});
    QVERIFY2(
        r.code == 1 && r.err.contains("trial 1 (optimizer.lr=0.001 schedule.warmup_steps=-5): schedule.warmup_steps"),
        r.err.constData());
    QCOMPARE(queueList()["items"].toArray().size(), 0);
    write_file_atomically(file, R"({"base": {"eval": {"every": 10}}, "sweep": {"optimizer.lr": [1e-3]},
                                    "early_stopping": {"min_steps": 10}})");
    r = test::run_tokamak({"sweep", QString::fromStdString(file), "--slurm", "--partition", "debug"});
    QVERIFY2(r.code == 1 && r.err.contains("--slurm needs a time limit per trial"), r.err.constData());
    QCOMPARE(queueList()["items"].toArray().size(), 0);
  }

  // A sweep whose base sets checkpoint.dir: every trial wrote step_N into that one folder, so a promoted
  // trial resumed another trial's weights and took its run uid. Each trial now keeps its own folder inside it,
  // and every segment of a trial starts, and checkpoints, as that trial's run.
  // Any exception ended the worker (a store locked past its busy timeout by a big import, a full disk), and
  // nothing started another until the next `queue add`: the queue sat with work and no worker. Now the worker
  // waits and tries again, says so once, and works the queue to its end.
  void aLongLockedStoreDelaysTheWorkerButDoesNotEndIt() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    QCOMPARE(test::run_tokamak({"queue", "pause"}).code, 0);
    const int64_t first = addRun(data, 2, "first"), second = addRun(data, 2, "second");
    QTRY_VERIFY_WITH_TIMEOUT(workerPid() == 0, test::kPatienceMs);  // paused: none works
    {
      RunStore store(default_db_path());
      RunQueue(store).set_paused(false);
    }
    // A writer that holds the store past the 5 s busy timeout, from before the worker starts.
    std::atomic<bool> locked{false};
    std::thread writer([&] {
      RunStore store(default_db_path());
      store.transaction([&] {
        locked = true;
        std::this_thread::sleep_for(std::chrono::seconds(8));
      });
    });
    while (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    QProcess worker;
    worker.start(test::tokamak_bin(), {"queue", "work"});
    writer.join();
    QVERIFY(worker.waitForFinished(10 * test::kPatienceMs));
    const QString out = QString::fromUtf8(worker.readAllStandardOutput()),
                  err = QString::fromUtf8(worker.readAllStandardError());
    QVERIFY2(worker.exitCode() == 0, qPrintable(err));
    QCOMPARE(out.count("the queue cannot go on for now:"), 1);
    QVERIFY2(out.contains("locked") && out.contains("the queue works again"), qPrintable(out));
    QCOMPARE(itemOf(first)["state"].toString(), QString("done"));
    QCOMPARE(itemOf(second)["state"].toString(), QString("done"));
  }

  void sweepTrialsSharingABaseCheckpointDirKeepTheirOwnWeights() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000), shared = env_->path("sweep-checkpoints");
    Config base;
    apply_overrides(base, test::quiet_run_overrides(data, 8));
    apply_overrides(base, {"eval.every=2", "eval.batches=1", "checkpoint.minutes=0", "checkpoint.dir=" + shared});
    const std::string file = env_->path("shared.json");
    write_file_atomically(file, R"({"name": "shared", "base": )" + config_to_json(base, -1) +
                                    R"(, "sweep": {"optimizer.lr": [3e-3, 1e-2]},
                                   "early_stopping": {"method": "asha", "min_steps": 2, "eta": 2}})");
    test::CliResult r = test::run_tokamak({"sweep", QString::fromStdString(file), "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const qint64 sweep = r.json()["sweep_id"].toInteger();
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 10 * test::kPatienceMs);
    const QJsonArray trials =
        QJsonDocument::fromJson(test::run_tokamak({"sweep", "status", QString::number(sweep), "--json"}).out)
            .object()["trials"]
            .toArray();
    QCOMPARE(trials.size(), 2);
    std::set<QString> folders;
    int resumed = 0;
    for (const QJsonValue& t : trials) {
      const QJsonObject item = itemOf(t.toObject()["queue_id"].toInteger());
      QVERIFY2(item["state"].toString() == "done" || item["state"].toString() == "stopped",
               qPrintable(item["state"].toString() + " " + item["error"].toString()));
      const QString uid = item["run_uid"].toString();
      const QByteArray journal = journalOf(item);
      const std::vector<QJsonObject> starts = events(journal, "start");
      resumed += int(starts.size()) - 1;
      for (const QJsonObject& e : starts) QCOMPARE(e["run_uid"].toString(), uid);
      for (const QJsonObject& e : events(journal, "checkpoint")) {
        const std::string path = e["path"].toString().toStdString();
        QVERIFY2(path.rfind(shared + "/", 0) == 0, path.c_str());
        QCOMPARE(QString::fromStdString(read_checkpoint_info(path).run_uid), uid);
        folders.insert(QString::fromStdString(std::filesystem::path(path).parent_path().string()));
      }
    }
    QVERIFY(resumed >= 1);             // the better trial went on from its rung
    QCOMPARE(int(folders.size()), 2);  // one folder a trial
  }

  void ashaStopsTheWorstAndResumesPromotedTrialsBitExact() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    Config base;
    apply_overrides(base, test::tiny_run_overrides({"data.path=" + data, "train.batch_size=2", "train.log_every=1",
                                                    "sample.every=-1", "eval.every=4", "eval.batches=2",
                                                    "schedule.warmup_steps=2", "threads=1", "train.steps=16",
                                                    "checkpoint.minutes=0", "optimizer.grad_clip=0"}));
    // Two rates that learn and two that blow up; η = 2: rungs at steps 4 and 8, the end at 16.
    const std::string file = env_->path("lr.json");
    write_file_atomically(file, R"({"name": "lr", "base": )" + config_to_json(base, -1) +
                                    R"(, "sweep": {"optimizer.lr": [3e-3, 1e-2, 3, 10]},
                                   "early_stopping": {"method": "asha", "min_steps": 4, "eta": 2}})");
    test::CliResult dry = test::run_tokamak({"sweep", QString::fromStdString(file), "--dry-run", "--json"});
    QVERIFY2(dry.code == 0, dry.err.constData());
    const QJsonObject plan = dry.json();
    QCOMPARE(plan["trials"].toArray().size(), 4);
    QCOMPARE(plan["asha"].toObject()["rungs"].toArray(), (QJsonArray{4, 8}));
    QCOMPARE(queueList()["items"].toArray().size(), 0);  // a dry run queues nothing

    test::CliResult r = test::run_tokamak({"sweep", QString::fromStdString(file), "--json"});
    QVERIFY2(r.code == 0, r.err.constData());
    const qint64 sweep = r.json()["sweep_id"].toInteger();
    QTRY_VERIFY_WITH_TIMEOUT(queueSettled(), 10 * test::kPatienceMs);
    const QJsonObject status = test::run_tokamak({"sweep", "status", QString::number(sweep), "--json"}).json();
    const QJsonArray trials = status["trials"].toArray();
    QCOMPARE(trials.size(), 4);
    // Which key matters: the rate's rank correlation with the metric at the first rung, over all four trials.
    const QJsonObject importance = status["importance"].toArray().at(0).toObject();
    QCOMPARE(importance["key"].toString(), QString("optimizer.lr"));
    QCOMPARE(importance["measure"].toString(), QString("spearman"));
    QCOMPARE(importance["n"].toInt(), 4);
    QVERIFY(importance["rho"].isDouble());

    // At each rung, every trial stopped there ranks below every trial of the top half of that rung.
    std::map<int, std::vector<QJsonObject>> at;  // rung → results
    for (const QJsonValue& t : trials)
      for (const QJsonValue& g : t.toObject()["rungs"].toArray()) {
        QJsonObject row = g.toObject();
        row["trial"] = t.toObject()["point"];
        at[row["rung"].toInt()].push_back(row);
      }
    QCOMPARE(int(at[0].size()), 4);
    for (int k : {0, 1}) {
      std::vector<QJsonObject> rung = at[k];
      std::sort(rung.begin(), rung.end(), [](const QJsonObject& x, const QJsonObject& y) {
        return rank_key(x["metric"]) < rank_key(y["metric"]);
      });
      const size_t top = rung.size() / 2;
      QVERIFY2(top >= 1, qPrintable(QString("rung %1 has %2 results").arg(k).arg(rung.size())));
      for (size_t i = 0; i < rung.size(); ++i) {
        if (i < top && std::isfinite(rank_key(rung[i]["metric"])))
          QVERIFY2(rung[i]["promoted"].toBool(), qPrintable(QString("rung %1: a top trial kept back").arg(k)));
        if (!rung[i]["promoted"].toBool()) QVERIFY(rank_key(rung[i]["metric"]) >= rank_key(rung[top - 1]["metric"]));
      }
      // Only promoted trials reach the next rung.
      for (const QJsonObject& next : at[k + 1]) {
        bool was = false;
        for (const QJsonObject& here : at[k])
          was = was || (here["trial"] == next["trial"] && here["promoted"].toBool());
        QVERIFY(was);
      }
    }
    // The blown-up rates are stopped at the first rung, worst there.
    for (const QJsonValue& t : trials) {
      const QJsonObject o = t.toObject();
      if (o["config"].toObject()["optimizer"].toObject()["lr"].toDouble() >= 10) {
        QCOMPARE(o["rungs"].toArray().size(), 1);
        QVERIFY(o["state"].toString() == "stopped" || o["state"].toString() == "failed");
      }
    }

    // The trial that trained to the end did so in three segments (two resumes), one continuous curve…
    QJsonObject winner;
    for (const QJsonValue& t : trials)
      if (t.toObject()["state"].toString() == "done") winner = t.toObject();
    QVERIFY(!winner.isEmpty());
    const QByteArray journal = journalOf(itemOf(winner["queue_id"].toInteger()));
    QCOMPARE(int(events(journal, "start").size()), 3);
    const std::vector<QJsonObject> steps = events(journal, "step");
    QCOMPARE(int(steps.size()), 16);
    for (int i = 0; i < 16; ++i) QCOMPARE(steps[size_t(i)]["step"].toInt(), i + 1);
    // …bit-equal to its config trained straight through.
    QJsonObject config = winner["config"].toObject();
    config["name"] = "straight";
    const std::string straight = env_->path("straight.json");
    write_file_atomically(straight, QJsonDocument(config).toJson().toStdString());
    test::CliResult s =
        test::run_tokamak({"train", "--json", "--no-store", "--config", QString::fromStdString(straight)});
    QVERIFY2(s.code == 0, s.err.right(400).constData());
    const std::vector<QJsonObject> ref = events(s.out, "step"), ref_eval = events(s.out, "eval");
    const std::vector<QJsonObject> evals = events(journal, "eval");
    QCOMPARE(ref.size(), steps.size());
    // Exact equality (QCOMPARE on doubles would allow a relative 1e-12).
    for (size_t i = 0; i < ref.size(); ++i)
      QVERIFY2(steps[i]["loss"].toDouble() == ref[i]["loss"].toDouble(), qPrintable(QString("step %1").arg(i + 1)));
    QCOMPARE(evals.size(), ref_eval.size());
    QCOMPARE(int(evals.size()), 4);
    for (size_t i = 0; i < evals.size(); ++i)
      QVERIFY2(evals[i]["val_loss"].toDouble() == ref_eval[i]["val_loss"].toDouble(),
               qPrintable(QString("eval %1").arg(i)));
  }
};

QTEST_GUILESS_MAIN(TestQueue)
#include "test_queue.moc"
