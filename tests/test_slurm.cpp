// Slurm for real: a one-node Slurm from Debian's packages started by the test (tests/support/slurm_cluster.h),
// driven through `tokamak slurm submit|status|cancel` as a user types them. A two-rank job (srun, Gloo)
// trains to the end with the losses of one process on the combined batch; a job that cannot start says why;
// scancel leaves the run stopped with a checkpoint it resumes from; `scontrol requeue` of a --requeue job
// resumes from that checkpoint and finishes the planned steps as one run; the bad cases give one line and
// queue nothing. What needs no cluster (scontrol's lines, time limits, MASTER_ADDR) is test_slurm_parse's.
#include "engine/torch/checkpoint/checkpoint.h"
#include "tests/support/big_batch.h"
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <functional>
#include <memory>

#include "engine/base/config/config.h"
#include "engine/fleet/remote/remote_host.h"
#include "engine/fleet/remote/slurm_client.h"
#include "engine/base/run/run_folder.h"
#include "engine/fleet/remote/slurm_queue.h"
#include "engine/fleet/remote/slurm_script.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/sshd_server.h"
#include "tests/support/test_support.h"

using namespace tokamak;

namespace {

// The events of a run folder's journal, in order.
QList<QJsonObject> journal(const QString& folder) {
  QList<QJsonObject> events;
  QFile f(folder + "/events.jsonl");
  if (!f.open(QIODevice::ReadOnly)) return events;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (!line.isEmpty()) events << QJsonDocument::fromJson(line).object();
  return events;
}

QList<QJsonObject> ofKind(const QList<QJsonObject>& events, const QString& kind) {
  QList<QJsonObject> out;
  for (const QJsonObject& e : events)
    if (e.value("event").toString() == kind) out << e;
  return out;
}

// optimizer.lr of the config an event or a sweep's trial carries.
double lrOf(const QJsonObject& o) { return o["config"].toObject()["optimizer"].toObject()["lr"].toDouble(); }

QString runFolders() { return QString::fromStdString(std::getenv("XDG_DATA_HOME")) + "/tokamak/checkpoints"; }

}  // namespace

class TestSlurm : public QObject {
  Q_OBJECT
  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SlurmCluster> slurm_;
  std::string data_;

  // `tokamak slurm status JOB --json`.
  QJsonObject status(qint64 job) {
    const test::CliResult r = test::run_tokamak({"slurm", "status", QString::number(job), "--json"});
    if (r.code != 0) qWarning("status: %s", qPrintable(r.err));
    return r.json();
  }

  // Polls the job until DONE says so (or TIMEOUT ms pass); returns the last status.
  QJsonObject waitFor(qint64 job, const std::function<bool(const QJsonObject&)>& done, int timeout_ms = 240000) {
    QElapsedTimer t;
    t.start();
    QJsonObject s;
    while (t.elapsed() < timeout_ms) {
      s = status(job);
      if (done(s)) return s;
      QThread::msleep(300);
    }
    return s;
  }

  static bool ended(const QJsonObject& s) {
    const QString st = s.value("state").toString();
    return !st.isEmpty() && st != "PENDING" && st != "RUNNING" && st != "COMPLETING" && st != "CONFIGURING" &&
           st != "REQUEUED";
  }

  // Until the run's journal holds at least one step event.
  bool waitForSteps(const QString& folder, int timeout_ms = 240000) {
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < timeout_ms) {
      if (!ofKind(journal(folder), "step").isEmpty()) return true;
      QThread::msleep(200);
    }
    return false;
  }

  // `tokamak slurm submit --json` of a tiny two-rank run; the caller checks the result.
  QJsonObject submit(const QStringList& slurmArgs, const std::vector<std::string>& more) {
    std::vector<std::string> sets = test::dist_tiny_sets(data_);
    sets.insert(sets.end(), more.begin(), more.end());
    const test::CliResult r =
        test::run_tokamak(QStringList{"slurm", "submit", "--json"} + slurmArgs + test::set_args(sets));
    if (r.code != 0) qWarning("submit: %s", qPrintable(r.err));
    return r.json();
  }

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    data_ = env_->corpus_excerpt(120000);
    slurm_ = std::make_unique<test::SlurmCluster>();
    QVERIFY2(slurm_->ok(), qPrintable(slurm_->error()));  // CI fails here, in one line, rather than skipping
    QVERIFY2(slurm_->cpus() >= 2, "the two-rank job needs a node with 2 CPUs");
  }
  void cleanupTestCase() { slurm_.reset(); }

  // The script that would be submitted, and nothing written or queued.
  void dryRunShowsTheScript() {
    const test::CliResult r =
        test::run_tokamak(QStringList{"slurm", "submit", "--dry-run", "--partition", "debug", "--nodes", "1",
                                      "--ntasks-per-node", "2", "--time", "01:00:00", "--requeue"} +
                          test::set_args(test::dist_tiny_sets(data_)));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const char* line :
         {"#SBATCH --partition=debug", "#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=2", "#SBATCH --time=01:00:00",
          "#SBATCH --requeue", "#SBATCH --signal=B:USR1@120",
          "first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)", "srun --kill-on-bad-exit=1 "})
      QVERIFY2(r.out_text().contains(line), qPrintable(QString(line) + " missing from:\n" + r.out));
    QVERIFY(r.out_text().startsWith("#!/bin/bash\n"));
    QVERIFY2(!QDir(runFolders()).exists() || QDir(runFolders()).isEmpty(), "a dry run created a run folder");
    QCOMPARE(slurm_->run("squeue", {"-h", "-o", "%i"}).trimmed(), QString());
  }

  // Two Gloo ranks started by srun train to the end; each step's loss and gradient norm equal one process's
  // on both ranks' batches concatenated (test_dist's tolerances: 1e-5 and 1e-4 relative, float rounding of
  // sums taken in another order).
  void twoRankJobEqualsOneProcess() {
    const QJsonObject sub = submit(
        {"--partition", "debug", "--nodes", "1", "--ntasks-per-node", "2", "--time", "01:00:00"}, {"train.steps=5"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    const QString folder = sub.value("folder").toString();
    QVERIFY(QFile::exists(folder + "/job.sh"));
    QVERIFY(QFile::exists(folder + "/config.json"));
    const QJsonObject end = waitFor(job, ended);
    QCOMPARE(end.value("state").toString(), QString("COMPLETED"));

    const QList<QJsonObject> events = journal(folder);
    const QList<QJsonObject> starts = ofKind(events, "start");
    QCOMPARE(starts.size(), 1);  // rank 0 only writes the journal
    QCOMPARE(starts[0].value("world_size").toInt(), 2);
    const QList<QJsonObject> ends = ofKind(events, "end");
    QCOMPARE(ends.size(), 1);
    QCOMPARE(ends[0].value("status").toString(), QString("finished"));
    QCOMPARE(starts[0].value("run_uid").toString(), sub.value("run_uid").toString());

    Config c;
    std::vector<std::string> sets = test::dist_tiny_sets(data_);
    sets.push_back("train.steps=5");
    apply_overrides(c, sets);
    const test::Reference ref = test::one_big_batch(c, 2);
    const QList<QJsonObject> steps = ofKind(events, "step");
    QCOMPARE(static_cast<size_t>(steps.size()), ref.loss.size());
    for (int i = 0; i < steps.size(); ++i) {
      const double loss = steps[i].value("loss").toDouble(), norm = steps[i].value("grad_norm").toDouble();
      QVERIFY2(std::abs(loss - ref.loss[i]) < 1e-5 * ref.loss[i],
               qPrintable(QString("step %1 loss %2 vs %3").arg(i + 1).arg(loss).arg(ref.loss[i])));
      QVERIFY2(std::abs(norm - ref.grad_norm[i]) < 1e-4 * ref.grad_norm[i],
               qPrintable(QString("step %1 norm %2 vs %3").arg(i + 1).arg(norm).arg(ref.grad_norm[i])));
    }
    // The store has the run once, finished, with two ranks.
    RunStore store("");
    const int64_t id = store.find_uid(sub.value("run_uid").toString().toStdString());
    QVERIFY(id > 0);
    QCOMPARE(QString::fromStdString(store.run(id).status), QString("finished"));
    QCOMPARE(store.run(id).world_size, int64_t(2));
  }

  // A debug partition's short limit is accepted and sets the checkpoint interval: half of the job's time
  // (nothing of the run is lost to a limit the interval used to be longer than).
  void shortTimeLimitSetsTheCheckpointInterval() {
    const test::CliResult r = test::run_tokamak(QStringList{"slurm", "submit", "--json", "--partition", "down",
                                                            "--nodes", "1", "--ntasks-per-node", "1", "--time",
                                                            "00:10:00", "--set", "checkpoint.minutes=30"} +
                                                test::set_args(test::dist_tiny_sets(data_)));
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY2(r.err_text().contains("checkpoint.minutes=5 (from --time 00:10:00)"), qPrintable(r.err));
    const QJsonObject sub = r.json();
    const Config c = config_from_json(read_file(sub.value("folder").toString().toStdString() + "/config.json"));
    QCOMPARE(c.checkpoint.minutes, 5.0);
    QCOMPARE(test::run_tokamak({"slurm", "cancel", QString::number(sub.value("job_id").toInteger())}).code, 0);
  }

  // `tokamak sweep --slurm`: the sweep is one job array, each trial one task that trains its own run to the end
  // with its own values; each task settles its trial when it ends (`sweep status` shows them).
  void sweepIsOneJobArray() {
    Config base;
    std::vector<std::string> sets = test::dist_tiny_sets(data_);
    sets.push_back("train.steps=4");
    apply_overrides(base, sets);
    const QString file = QString::fromStdString(env_->path("array.json"));
    write_file_atomically(file.toStdString(), R"({"name": "arr", "base": )" + config_to_json(base, -1) +
                                                  R"(, "sweep": {"optimizer.lr": [0.001, 0.002]}})");
    const QStringList slurm = {"--slurm",           "--partition", "debug",  "--nodes", "1",
                               "--ntasks-per-node", "1",           "--time", "01:00:00"};
    const test::CliResult r = test::run_tokamak(QStringList{"sweep", file, "--json"} + slurm);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject sub = r.json();
    QVERIFY(sub.value("job_id").toInteger() > 0);
    QFile script(sub.value("script").toString());
    QVERIFY(script.open(QIODevice::ReadOnly));
    QVERIFY(script.readAll().contains("#SBATCH --array=0-1\n"));
    const QString id = QString::number(sub.value("sweep_id").toInteger());
    QJsonArray trials;
    QElapsedTimer t;
    t.start();
    for (bool going = true; going && t.elapsed() < 240000; QThread::msleep(300)) {
      trials = QJsonDocument::fromJson(test::run_tokamak({"sweep", "status", id, "--json"}).out)["trials"].toArray();
      going = false;
      for (const QJsonValue& v : trials) going = going || v["state"].toString() == "running";
    }
    QCOMPARE(trials.size(), 2);
    QStringList uids;
    for (const QJsonValue& v : trials) {
      QCOMPARE(v["state"].toString(), QString("done"));
      QCOMPARE(v["target"].toString(), QString("slurm"));
      const QList<QJsonObject> events = journal(v["folder"].toString());
      QCOMPARE(ofKind(events, "start").size(), 1);
      QCOMPARE(ofKind(events, "step").size(), 4);
      QCOMPARE(ofKind(events, "end").value(0).value("status").toString(), QString("finished"));
      // Each task trained its own trial: its run's config has the trial's rate.
      QCOMPARE(lrOf(ofKind(events, "start")[0]), lrOf(v.toObject()));
      uids << v["run_uid"].toString();
    }
    QVERIFY(uids[0] != uids[1]);
    QVERIFY(lrOf(trials[0].toObject()) != lrOf(trials[1].toObject()));
  }

  // ASHA on Slurm: the array's tasks stop at the first rung; each task, when its training ends, records its
  // trial's metric there and submits the trials ASHA promotes as jobs of their own, which resume the same run
  // from its rung checkpoint. Every trial reaches rung 0, the best goes on to the end as one run, at least one
  // stops at its rung, and the sweep spends fewer steps than the grid.
  void ashaSweepPromotesAsJobs() {
    Config base;
    std::vector<std::string> sets = test::dist_tiny_sets(data_);
    sets.insert(sets.end(), {"train.steps=8", "eval.every=2", "eval.batches=2"});
    apply_overrides(base, sets);
    const QString file = QString::fromStdString(env_->path("asha.json"));
    write_file_atomically(file.toStdString(), R"({"name": "asha", "base": )" + config_to_json(base, -1) +
                                                  R"(, "sweep": {"optimizer.lr": [0.0005, 0.001, 0.002, 0.004]},
                                                  "early_stopping": {"min_steps": 2, "eta": 2}})");
    const test::CliResult r = test::run_tokamak({"sweep", file, "--json", "--slurm", "--partition", "debug", "--nodes",
                                                 "1", "--ntasks-per-node", "1", "--time", "01:00:00"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject sub = r.json();
    const qint64 arrayJob = sub.value("job_id").toInteger();
    QFile script(sub.value("script").toString());
    QVERIFY(script.open(QIODevice::ReadOnly));
    const QByteArray text = script.readAll();
    QVERIFY2(text.contains("halt_steps=( 2 2 2 2 )") && text.contains(" sweep advance --job "), text.constData());
    const QString id = QString::number(sub.value("sweep_id").toInteger());
    QJsonArray trials;
    QElapsedTimer t;
    t.start();
    for (bool going = true; going && t.elapsed() < 400000; QThread::msleep(500)) {
      trials = QJsonDocument::fromJson(test::run_tokamak({"sweep", "status", id, "--json"}).out)["trials"].toArray();
      going = false;
      for (const QJsonValue& v : trials)
        going = going || v["state"].toString() == "running" || v["state"].toString() == "queued";
    }
    QCOMPARE(trials.size(), 4);
    int done = 0, stoppedAtRung = 0, steps = 0, ownJobs = 0, promoted = 0;
    for (const QJsonValue& v : trials) {
      const QString state = v["state"].toString(), folder = v["folder"].toString();
      const QList<QJsonObject> events = journal(folder);
      const QList<QJsonObject> stepEvents = ofKind(events, "step");
      steps += stepEvents.size();
      if (stepEvents.size() > 2) ++promoted;
      const QJsonArray rungs = v["rungs"].toArray();
      QVERIFY2(!rungs.isEmpty(), qPrintable(v["name"].toString()));
      QCOMPARE(rungs[0]["step"].toInt(), 2);
      // The metric ASHA ranked is the val loss the run reported at step 2.
      double valAt2 = -1;
      for (const QJsonObject& e : ofKind(events, "eval"))
        if (e["step"].toInt() == 2 && valAt2 < 0) valAt2 = e["val_loss"].toDouble();
      QVERIFY2(valAt2 > 0, qPrintable(folder));
      QCOMPARE(rungs[0]["metric"].toDouble(), valAt2);
      // One run however many segments: steps 1 … its last, each once.
      for (int i = 0; i < stepEvents.size(); ++i) QCOMPARE(stepEvents[i]["step"].toInt(), i + 1);
      if (state == "done") {
        ++done;
        QCOMPARE(stepEvents.size(), 8);
        QVERIFY(ofKind(events, "start").size() >= 2);  // it was resumed at least once, at a rung
      } else {
        QCOMPARE(state, QString("stopped"));
        QVERIFY2(stepEvents.size() == 2 || stepEvents.size() == 4, qPrintable(folder));
        if (stepEvents.size() == 2) ++stoppedAtRung;
      }
      QFile slurmFile(folder + "/slurm.json");
      QVERIFY(slurmFile.open(QIODevice::ReadOnly));
      if (QJsonDocument::fromJson(slurmFile.readAll())["job_id"].toInteger() != arrayJob) ++ownJobs;
    }
    qInfo("ASHA on Slurm: %d trials done, %d stopped at rung 0, %d steps of the grid's 32, %d promoted jobs", done,
          stoppedAtRung, steps, ownJobs);
    QVERIFY2(done >= 1, "no trial trained to the end");
    QVERIFY2(stoppedAtRung >= 1, "early stopping stopped nothing at rung 0");
    QVERIFY2(steps < 4 * 8, qPrintable(QString::number(steps)));
    QCOMPARE(ownJobs, promoted);  // every promoted trial went on in a job of its own, the others only in the array
  }

  // A job that cannot start says why: its partition is down.
  void pendingJobSaysWhy() {
    const QJsonObject sub = submit(
        {"--partition", "down", "--nodes", "1", "--ntasks-per-node", "1", "--time", "01:00:00"}, {"train.steps=5"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    const QJsonObject s = waitFor(
        job, [](const QJsonObject& o) { return o.value("reason").toString() == "PartitionDown"; }, 30000);
    QCOMPARE(s.value("state").toString(), QString("PENDING"));
    QCOMPARE(s.value("reason").toString(), QString("PartitionDown"));
    // Its run folder says queued (not crashed: no rank has owned it yet).
    QCOMPARE(QString::fromStdString(read_run_state(RunFolder{sub.value("folder").toString().toStdString()}).state),
             QString("queued"));
    const test::CliResult human = test::run_tokamak({"slurm", "status", QString::number(job)});
    QVERIFY2(human.out_text().contains("pending: PartitionDown (its partition is down)"), qPrintable(human.out));
    const test::CliResult cancel = test::run_tokamak({"slurm", "cancel", QString::number(job), "--wait"});
    QVERIFY2(cancel.code == 0, qPrintable(cancel.err));
    QVERIFY2(cancel.out_text().contains("ended: cancelled"), qPrintable(cancel.out));
  }

  // scancel of a running job: both ranks get SIGTERM, rank 0 writes a checkpoint, the run ends stopped, and
  // `tokamak train` resumes from that checkpoint with the next step.
  void cancelLeavesAResumableCheckpoint() {
    const QJsonObject sub =
        submit({"--partition", "debug", "--nodes", "1", "--ntasks-per-node", "2", "--time", "01:00:00"},
               {"train.steps=100000", "train.log_every=10"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    const QString folder = sub.value("folder").toString();
    QVERIFY2(waitForSteps(folder), "no step within 4 minutes");
    QCOMPARE(status(job).value("state").toString(), QString("RUNNING"));
    const test::CliResult cancel = test::run_tokamak({"slurm", "cancel", QString::number(job), "--wait"});
    QVERIFY2(cancel.code == 0, qPrintable(cancel.err));

    const QList<QJsonObject> events = journal(folder);
    const QList<QJsonObject> ends = ofKind(events, "end");
    QCOMPARE(ends.size(), 1);
    QCOMPARE(ends[0].value("status").toString(), QString("stopped"));
    const int64_t last = ofKind(events, "step").last().value("step").toInteger();
    QVERIFY(last < 100000);
    const std::vector<std::string> saved = list_checkpoints(folder.toStdString());
    QVERIFY2(!saved.empty(), "no checkpoint in the run folder");
    QCOMPARE(saved.back(), checkpoint_path(folder.toStdString(), last));
    RunStore store("");
    QCOMPARE(QString::fromStdString(store.run(store.find_uid(sub.value("run_uid").toString().toStdString())).status),
             QString("stopped"));

    // Resumable: one process continues the same run from that checkpoint, with the next step.
    const test::CliResult resumed =
        test::run_tokamak({"train", "--json", "--set", QString::fromStdString("checkpoint.resume=" + saved.back()),
                           "--set", QString("train.steps=%1").arg(last + 2), "--set", "train.log_every=1"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    const QString firstStep = QString("\"step\":%1,").arg(last + 1);
    QVERIFY2(resumed.out_text().contains(firstStep), qPrintable(resumed.out_text().left(2000)));
    QVERIFY2(resumed.out_text().contains("\"status\":\"finished\""), qPrintable(resumed.out_text().right(500)));
  }

  // `scontrol requeue` of a running --requeue job: it checkpoints, waits in the queue, starts again, resumes
  // from the checkpoint (same run, same journal, the steps continuing) and finishes the planned steps; the
  // store holds one run. The partition comes from the remembered defaults (no --partition here).
  void requeueResumesAsOneRun() {
    const int steps = 400;
    const QJsonObject sub = submit({"--nodes", "1", "--ntasks-per-node", "2", "--time", "01:00:00", "--requeue"},
                                   {QString("train.steps=%1").arg(steps).toStdString(), "train.log_every=10"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    const QString folder = sub.value("folder").toString();
    QVERIFY2(waitForSteps(folder), "no step within 4 minutes");
    int code = -1;
    slurm_->run("scontrol", {"requeue", QString::number(job)}, &code);
    QCOMPARE(code, 0);
    // A requeued job waits (BeginTime) before it may start again; let it start now.
    waitFor(
        job, [](const QJsonObject& o) { return o.value("state").toString() == "PENDING"; }, 30000);
    slurm_->run("scontrol", {"update", "JobId=" + QString::number(job), "StartTime=now"});
    const QJsonObject end = waitFor(job, ended, 300000);
    QCOMPARE(end.value("state").toString(), QString("COMPLETED"));
    QCOMPARE(end.value("restarts").toInt(), 1);

    const QList<QJsonObject> events = journal(folder);
    const QList<QJsonObject> starts = ofKind(events, "start"), ends = ofKind(events, "end");
    QCOMPARE(starts.size(), 2);
    QCOMPARE(ends.size(), 2);
    QCOMPARE(ends[0].value("status").toString(), QString("stopped"));
    QCOMPARE(ends[1].value("status").toString(), QString("finished"));
    QCOMPARE(starts[1].value("run_uid").toString(), starts[0].value("run_uid").toString());
    // Step count continuous: each start reports its first step, then every 10th; the resumed start's first
    // step is the one after the stop's, none comes twice, and every 10th step up to the planned end is there.
    qint64 before = 0, stoppedAt = -1, resumedAt = -1;
    int tens = 0;
    bool second = false;
    for (const QJsonObject& e : events) {
      const QString kind = e.value("event").toString();
      if (kind == "end" && !second) stoppedAt = before, second = true;
      if (kind != "step") continue;
      const qint64 step = e.value("step").toInteger();
      QVERIFY2(step > before, qPrintable(QString("step %1 after %2").arg(step).arg(before)));
      if (second && resumedAt < 0) resumedAt = step;
      tens += step % 10 == 0;
      before = step;
    }
    QVERIFY(stoppedAt > 0 && stoppedAt < steps);
    QCOMPARE(resumedAt, stoppedAt + 1);
    QCOMPARE(before, qint64(steps));
    QCOMPARE(tens, steps / 10);
    QFile log(folder + "/output.log");
    QVERIFY(log.open(QIODevice::ReadOnly));
    QVERIFY2(log.readAll().contains("(restart 1) on localhost, resuming from"), "the second start did not resume");
    RunStore store("");
    int same = 0;
    for (const RunListing& r : store.list_runs()) same += r.run.uid == sub.value("run_uid").toString().toStdString();
    QCOMPARE(same, 1);
    QCOMPARE(QString::fromStdString(store.run(store.find_uid(sub.value("run_uid").toString().toStdString())).status),
             QString("finished"));
  }

  // The cluster's login node over ssh (Debian's sshd on loopback): submit, status and cancel through
  // `--host`, the same commands running there; the job's run lands in the host's run folders.
  void loginNodeOverSsh() {
    const QStringList env = {"SLURM_CONF=" + slurm_->path("slurm.conf"),
                             "XDG_DATA_HOME=" + qEnvironmentVariable("XDG_DATA_HOME"),
                             "XDG_CONFIG_HOME=" + qEnvironmentVariable("XDG_CONFIG_HOME"),
                             "TOKAMAK_CACHE=" + qEnvironmentVariable("TOKAMAK_CACHE")};
    test::SshdServer sshd(env);
    QVERIFY2(sshd.ok(), qPrintable(sshd.error()));
    const QStringList where = sshd.cli_args();
    const QJsonObject sub = submit(where + QStringList{"--tokamak", test::tokamak_bin(), "--partition", "debug",
                                                       "--nodes", "1", "--ntasks-per-node", "1", "--time", "01:00:00"},
                                   {"train.steps=3"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    QJsonObject s;
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 240000) {
      const test::CliResult r =
          test::run_tokamak(QStringList{"slurm", "status", QString::number(job), "--json"} + where);
      QVERIFY2(r.code == 0, qPrintable(r.err));
      s = r.json();
      if (ended(s)) break;
      QThread::msleep(300);
    }
    QCOMPARE(s.value("state").toString(), QString("COMPLETED"));
    const QList<QJsonObject> ends = ofKind(journal(sub.value("folder").toString()), "end");
    QCOMPARE(ends.size(), 1);
    QCOMPARE(ends[0].value("status").toString(), QString("finished"));
    // A job Slurm does not know, named in one line from the login node.
    const test::CliResult unknown = test::run_tokamak(QStringList{"slurm", "cancel", "99999"} + where);
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err_text().startsWith("tokamak: Slurm does not know job 99999 on " +
                                           QString::fromStdString(sshd.target().spec())),
             qPrintable(unknown.err));
    QCOMPARE(unknown.err_text().trimmed().count('\n'), 0);
    SshOptions shared = sshd.client();  // the CLI's shared connection (cache_dir()/ssh), closed before sshd goes
    shared.control_dir = cache_dir() + "/ssh";
    shared.config_file = "/dev/null";
    RemoteHost(sshd.target(), shared).close();
  }

  // Each bad case is one line before anything is written or queued.
  // #SBATCH values were written bare: sbatch split them at blanks, took '#' for a comment and aborted on a lone
  // quote ("Unmatched `'`"), and Slurm read a folder's '%' as a pattern, so a run named with an apostrophe was
  // refused and one with a space lost its output.log. Any name a user can type now reaches Slurm as typed.
  void anyRunNameKeepsItsJobAndItsLog() {
    const QString name = R"(it's #1 at 50% "done" \ ok)";
    const QJsonObject sub =
        submit({"--partition", "debug", "--nodes", "1", "--ntasks-per-node", "1", "--time", "01:00:00", "--name", name},
               {"train.steps=2"});
    const qint64 job = sub.value("job_id").toInteger();
    QVERIFY2(job > 0, qPrintable(QJsonDocument(sub).toJson()));
    QCOMPARE(waitFor(job, ended).value("state").toString(), QString("COMPLETED"));
    QFile log(sub.value("folder").toString() + "/output.log");
    QVERIFY2(log.open(QIODevice::ReadOnly), qPrintable(log.fileName()));
    QVERIFY(log.readAll().contains("tokamak job " + QByteArray::number(job)));
    const QString shown = slurm_->run("scontrol", {"show", "job", "-o", QString::number(job)});
    const QString job_name = "tokamak-" + QString::fromStdString(safe_file_name(name.toStdString()));
    QVERIFY2(shown.contains("JobName=" + job_name + " "), qPrintable(shown));
  }

  // `sweep --slurm` submitted the array and only then recorded the sweep: a store that could not take it left
  // jobs whose tasks had no sweep to settle into. Now a store that fails stops the sweep before any job exists.
  void aSweepTheStoreCannotTakeSubmitsNothing() {
    Config base;
    std::vector<std::string> sets = test::dist_tiny_sets(data_);
    sets.push_back("train.steps=2");
    apply_overrides(base, sets);
    const std::string file = env_->path("unrecorded.json");
    write_file_atomically(file, R"({"name": "unrecorded", "base": )" + config_to_json(base, -1) +
                                    R"(, "sweep": {"optimizer.lr": [0.001, 0.002]}})");
    const std::string not_a_folder = env_->path("plain-file");
    write_file_atomically(not_a_folder, "x");
    const QString sweeps = QString::fromStdString(std::getenv("XDG_DATA_HOME")) + "/tokamak/sweeps";
    const QStringList before = QDir(runFolders()).entryList(QDir::Dirs | QDir::NoDotAndDotDot),
                      sweeps_before = QDir(sweeps).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    const QString queued = slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"});
    const test::CliResult r = test::run_tokamak(
        {"sweep", QString::fromStdString(file), "--slurm", "--partition", "debug", "--nodes", "1", "--ntasks-per-node",
         "1", "--time", "01:00:00", "--db", QString::fromStdString(not_a_folder + "/runs.db")});
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err_text().startsWith("tokamak: ") && r.err_text().trimmed().count('\n') == 0, qPrintable(r.err));
    QCOMPARE(slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"}), queued);
    QCOMPARE(QDir(runFolders()).entryList(QDir::Dirs | QDir::NoDotAndDotDot), before);
    QCOMPARE(QDir(sweeps).entryList(QDir::Dirs | QDir::NoDotAndDotDot), sweeps_before);
  }

  // An sbatch that did not answer in time read as refused, and `slurm submit` / `sweep --slurm` then deleted the
  // folders of a job Slurm may well have accepted. A stand-in sbatch that hangs (the real one answers at once
  // here) now gives SlurmSubmitUnknown, which keeps them; one that refuses is still a plain Error.
  void sbatchThatDoesNotAnswerIsNotARefusal() {
    QTemporaryDir bin;
    const auto standIn = [&](const QByteArray& body) {
      QFile f(bin.filePath("sbatch"));
      QVERIFY(f.open(QIODevice::WriteOnly) && f.write("#!/bin/sh\n" + body + "\n") > 0);
      f.close();
      QVERIFY(f.setPermissions(f.permissions() | QFileDevice::ExeOwner));
    };
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", bin.path().toUtf8() + ":" + path);
    const SlurmClient slurm{CommandHost(), 1.0};
    standIn("exec sleep 30");
    bool unknown = false;
    try {
      slurm.submit("/nonexistent/job.sh");
    } catch (const SlurmSubmitUnknown& e) {
      unknown = QString(e.what()).contains("did not answer in time: Slurm may have accepted the job") &&
                QString(e.what()).contains("squeue");
    } catch (const std::exception&) {}
    standIn("echo 'sbatch: error: Batch job submission failed: Invalid partition' >&2; exit 1");
    QString refused;
    bool plain = false;
    try {
      slurm.submit("/nonexistent/job.sh");
    } catch (const SlurmSubmitUnknown&) {
    } catch (const Error& e) {
      plain = true, refused = e.what();
    }
    qputenv("PATH", path);
    QVERIFY(unknown);
    QVERIFY2(plain && refused.contains("sbatch refused the job: sbatch: error: Batch job submission failed"),
             qPrintable(refused));
  }

  // A promoted trial whose config this version refuses was claimed (running) and then its submission threw
  // outside the part that fails a row: it stayed running with no job, and nothing would ever settle it. Now the
  // row fails with the reason.
  void aPromotedTrialWhoseConfigIsRefusedFails() {
    const std::string db = env_->path("refused.db"), job = env_->path("refused-job.json");
    const SweepPlan plan = plan_sweep(R"({"name": "refused", "sweep": {"optimizer.lr": [0.001]}})", "r.json", 0);
    const std::vector<std::pair<std::string, std::string>> runs = {{"0123456789abcdef", env_->path("refused-run")}};
    int64_t row = 0;
    {
      RunStore store(db);
      SweepStore(store).queue_plan(plan, "slurm", &runs);
      row = RunQueue(store).list().front().id;
      // Put back in the queue for a next rung, with a config a later version wrote and this one refuses.
      store.db().exec("UPDATE queue SET state = 'queued', config_json = '{\"train\": {\"stepz\": 1}}' WHERE id = " +
                      std::to_string(row));
    }
    write_file_atomically(job, R"({"partition": "debug", "nodes": 1, "ntasks_per_node": 1, "time_limit_s": 60})");
    const QString queued = slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"});
    const test::CliResult r = test::run_tokamak({"sweep", "advance", "--job", QString::fromStdString(job), "--run",
                                                 "0123456789abcdef", "--db", QString::fromStdString(db)});
    RunStore store(db);
    const QueueItem q = RunQueue(store).item(row);
    QVERIFY2(q.state == "failed", qPrintable(QString::fromStdString(q.state) + " " + r.err));
    QVERIFY2(QString::fromStdString(q.error).contains("could not submit its promoted job") &&
                 QString::fromStdString(q.error).contains("train.stepz"),
             q.error.c_str());
    QCOMPARE(slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"}), queued);  // no job
  }

  void badCasesAreOneLine_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("noSbatch");
    QTest::addColumn<QString>("expected");
    const QStringList ok = {"--nodes", "1", "--ntasks-per-node", "1", "--time", "01:00:00"};
    QTest::newRow("no sbatch") << (QStringList{"--partition", "debug"} + ok) << true
                               << "tokamak: no sbatch on this computer";
    QTest::newRow("no such partition") << (QStringList{"--partition", "nosuch"} + ok) << false
                                       << "tokamak: partition 'nosuch' does not exist on this computer (hint: use "
                                          "one of: debug, down)";
    QTest::newRow("no time before the requeue warning")
        << QStringList{"--partition", "debug",  "--nodes",  "1",        "--ntasks-per-node",
                       "1",           "--time", "00:01:00", "--requeue"}
        << false << "tokamak: time limit 00:01:00 leaves no time before the requeue warning (120 s before the limit)";
  }
  void badCasesAreOneLine() {
    QFETCH(QStringList, args);
    QFETCH(bool, noSbatch);
    QFETCH(QString, expected);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    QTemporaryDir bare;
    if (noSbatch) {  // a PATH with a shell and nothing of Slurm
      QFile::link("/bin/sh", bare.filePath("sh"));
      env.insert("PATH", bare.path());
    }
    const QStringList before = QDir(runFolders()).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    const QString queued = slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"});
    const test::CliResult r =
        test::run_tokamak(QStringList{"slurm", "submit"} + args + QStringList{"--set", "checkpoint.minutes=30"} +
                              test::set_args(test::dist_tiny_sets(data_)),
                          env);
    QCOMPARE(r.code, 1);
    QVERIFY2(r.err_text().startsWith(expected), qPrintable(r.err));
    QCOMPARE(r.err_text().trimmed().count('\n'), 0);
    QCOMPARE(QDir(runFolders()).entryList(QDir::Dirs | QDir::NoDotAndDotDot), before);
    QCOMPARE(slurm_->run("squeue", {"-h", "-t", "all", "-o", "%i"}), queued);
  }
};

QTEST_GUILESS_MAIN(TestSlurm)
#include "test_slurm.moc"
