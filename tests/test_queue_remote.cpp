// The queue of an SSH host and the queue's GPUs. A host's queue over a real sshd on loopback
// (tests/support/ssh_host.h): `tokamak queue add --host` twice, the ssh connection killed (SIGKILL to its
// master process) while the first run trains and the second still waits, and the host's own worker trains
// both to the end; `queue list --host --json` is the host's own `queue list --json`; `sweep --host --dry-run`
// plans the very trials a local dry run plans, `sweep --host` queues them there, and remove, move, pause go
// through; bad hosts are one line. GPUs without a GPU: the slot allocator and the child's environment as pure
// functions, and the real worker handing two `cuda` runs one GPU each — which each run itself reports, as it
// fails on this GPU-less machine naming the CUDA_VISIBLE_DEVICES it was given.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <signal.h>

#include <map>
#include <set>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/gpu_slots.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/run/run_launch.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"

using namespace tokamak;

namespace {

bool settled(const QJsonObject& list) {
  if (!list.contains("items")) return false;  // the list failed: nothing is known of the queue
  for (const QJsonValue& v : list["items"].toArray()) {
    const QString s = v.toObject()["state"].toString();
    if (s == "queued" || s == "running") return false;
  }
  return true;
}

QJsonObject itemNamed(const QJsonObject& list, const QString& name) {
  for (const QJsonValue& v : list["items"].toArray())
    if (v.toObject()["name"].toString() == name) return v.toObject();
  return {};
}

// The pid of the shared connection's master ssh (`ssh -O check` says "Master running (pid=N)"), 0 when none.
pid_t masterPid(const SshTarget& target, const SshOptions& options) {
  std::vector<std::string> argv = ssh_close_argv(target, options);
  for (std::string& w : argv)
    if (w == "exit") w = "check";
  QStringList args;
  for (size_t i = 1; i < argv.size(); ++i) args << QString::fromStdString(argv[i]);
  QProcess p;
  p.start(QString::fromStdString(argv[0]), args);
  p.waitForFinished(30000);
  const QString said = p.readAllStandardError() + p.readAllStandardOutput();
  const int at = said.indexOf("pid=");
  return at < 0 ? 0 : static_cast<pid_t>(said.mid(at + 4).section(')', 0, 0).toInt());
}

}  // namespace

class TestQueueRemote : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SshHost> ssh_;

  // --host and the ssh options that reach the test's sshd, the CLI's shared connection included.
  // The CLI as the host's own shell would run it: its data folder, so its store and worker.
  QProcessEnvironment hostShell() const {
    return test::environment_with({"XDG_DATA_HOME=" + QString::fromStdString(ssh_->data())});
  }
  QStringList where() const { return ssh_->sshd().cli_args() + QStringList{"--tokamak", test::tokamak_bin()}; }
  SshOptions sharedConnection() const {
    SshOptions shared = ssh_->sshd().client();
    shared.control_dir = cache_dir() + "/ssh";
    shared.config_file = "/dev/null";
    return shared;
  }
  std::string hostDb() const { return ssh_->data() + "/tokamak/runs.db"; }
  QJsonObject hostList() { return test::run_tokamak(QStringList{"queue", "list", "--json"} + where()).json(); }

 private Q_SLOTS:
  void init() { env_ = std::make_unique<test::ScratchEnv>(); }
  void cleanup() {
    if (ssh_) {
      if (const long worker = queue_worker_pid(hostDb()); worker > 0) ::kill(static_cast<pid_t>(worker), SIGKILL);
      ssh_->end_runs();
      RemoteHost(ssh_->sshd().target(), sharedConnection()).close();
      ssh_.reset();
    }
    if (const long worker = queue_worker_pid(""); worker > 0) ::kill(static_cast<pid_t>(worker), SIGKILL);
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    env_.reset();
  }

  void gpuSlotsComeFromThePoolAndGoToOneRunEach() {
    Config cuda;
    cuda.device = "cuda";
    QCOMPARE(gpus_needed(cuda, 1), int64_t(1));
    QCOMPARE(gpus_needed(cuda, 0), int64_t(0));  // off: every run sees every GPU
    cuda.dist.gpus = 4;
    QCOMPARE(gpus_needed(cuda, 1), int64_t(4));  // its data-parallel ranks, one GPU each
    Config cpu;
    QCOMPARE(gpus_needed(cpu, 1), int64_t(0));
    Config chosen;
    chosen.device = "cuda:3";
    QCOMPARE(gpus_needed(chosen, 1), int64_t(0));  // it named its GPU itself

    const std::vector<std::string> pool = {"0", "1", "2", "3"};
    using Gpus = std::vector<std::string>;
    QVERIFY(pick_gpus(pool, {}, 1) == Gpus({"0"}));
    QVERIFY(pick_gpus(pool, {{"0"}}, 1) == Gpus({"1"}));
    QVERIFY(pick_gpus(pool, {{"0"}, {"2"}}, 2) == Gpus({"1", "3"}));  // the free ones, in the pool's order
    QVERIFY(!pick_gpus(pool, {{"0", "1"}, {"2"}}, 2));                // one free, two needed: it waits
    QVERIFY(pick_gpus(pool, {{"0", "1", "2", "3"}}, 0) == Gpus{});
    QVERIFY(pick_gpus({"GPU-a1", "GPU-b2"}, {{"GPU-a1"}}, 1) == Gpus({"GPU-b2"}));

    QVERIFY(parse_gpu_list("0,1,3") == Gpus({"0", "1", "3"}));
    QCOMPARE(join_gpu_list({"0", "1", "3"}), std::string("0,1,3"));
    QVERIFY(gpu_pool("", 3, nullptr) == Gpus({"0", "1", "2"}));
    QVERIFY(gpu_pool("2,5", 8, nullptr) == Gpus({"2", "5"}));
    // An inherited CUDA_VISIBLE_DEVICES (a Slurm job's, the user's) is the pool: the other GPUs were excluded.
    QVERIFY(gpu_pool("", 8, "2,5") == Gpus({"2", "5"}));
    QVERIFY(gpu_pool("", 8, "") == Gpus{});
    QVERIFY(gpu_pool("1", 8, "2,5") == Gpus({"1"}));  // the queue's own list, given on purpose, wins
    QVERIFY(test::error_of([] { gpu_pool("", 8, "0,0"); }).startsWith("CUDA_VISIBLE_DEVICES: GPU list '0,0'"));
    for (const char* bad : {"0,,1", "0,0", "a b", ""}) {
      bool refused = false;
      try {
        parse_gpu_list(bad);
      } catch (const Error& e) {
        refused = std::string(e.what()).find("GPU list '" + std::string(bad) + "'") == 0;
      }
      QVERIFY2(refused, bad);
    }

    // The child's environment: this one's, with the run's uid and its GPUs in place of any it had.
    const char* base[] = {"PATH=/bin", "CUDA_VISIBLE_DEVICES=0,1,2,3", "TOKAMAK_RUN_UID=old", "HOME=/h", nullptr};
    const std::vector<std::string> env = child_environment(base, "abc", {"CUDA_VISIBLE_DEVICES=2"});
    const std::set<std::string> got(env.begin(), env.end());
    QCOMPARE(env.size(), size_t(4));
    QVERIFY(got == std::set<std::string>({"PATH=/bin", "HOME=/h", "TOKAMAK_RUN_UID=abc", "CUDA_VISIBLE_DEVICES=2"}));
  }

  // Two `cuda` runs worked two at a time out of a pool of GPUs 0 and 1: each gets one, recorded in its folder,
  // and each run — failing here, where there is no GPU — names the CUDA_VISIBLE_DEVICES it was started with. A
  // run that needs more GPUs than the pool has is refused in one line instead of waiting for ever.
  void workerGivesEachCudaRunAGpuOfItsOwn() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    {
      RunStore store("");
      RunQueue queue(store);
      for (const char* name : {"g0", "g1", "too-big"}) {
        Config c;
        apply_overrides(c, test::quiet_run_overrides(data, 5));
        c.device = "cuda";
        if (std::string(name) == "too-big") c.dist.gpus = 3;
        QueueItem q;
        q.name = name, q.config_json = config_to_json(c, -1);
        store.transaction([&] { queue.add(q); });
      }
    }
    const test::CliResult work =
        test::run_tokamak({"queue", "work", "--parallel", "2", "--gpus", "0,1", "--gpus-per-run", "1"});
    QVERIFY2(work.code == 0, work.err.constData());
    const QJsonObject list = test::run_tokamak({"queue", "list", "--json"}).json();
    QCOMPARE(list["gpus"].toString(), QString("0,1"));
    QCOMPARE(list["gpus_per_run"].toInteger(), qint64(1));
    std::set<QString> given;
    for (const char* name : {"g0", "g1"}) {
      const QJsonObject item = itemNamed(list, name);
      QCOMPARE(item["state"].toString(), QString("failed"));
      const QString gpus = item["gpus"].toString();
      QVERIFY2(gpus == "0" || gpus == "1", qPrintable(gpus));
      given.insert(gpus);
      // The run's own account of its environment.
      QVERIFY2(item["error"].toString().contains("no CUDA GPU is visible (CUDA_VISIBLE_DEVICES=" + gpus + ")"),
               qPrintable(item["error"].toString()));
    }
    QCOMPARE(given.size(), size_t(2));  // started together, on different GPUs
    const QJsonObject big = itemNamed(list, "too-big");
    QCOMPARE(big["state"].toString(), QString("failed"));
    QVERIFY2(big["error"].toString().startsWith("needs 3 GPUs of its own; the queue hands out 2 (0,1)"),
             qPrintable(big["error"].toString()));
    QVERIFY(!big.contains("gpus"));
    const test::CliResult bad = test::run_tokamak({"queue", "work", "--gpus", "0,0"});
    QVERIFY2(
        bad.code == 1 && bad.err.startsWith("tokamak: GPU list '0,0' names GPU 0 twice") && bad.err.count('\n') == 1,
        bad.err.constData());
  }

  // The worker's pool ignored the CUDA_VISIBLE_DEVICES it inherited: runs landed on GPUs a Slurm job, or the
  // user, had excluded. With it set, its GPUs are the pool and each run gets one of them.
  void inheritedCudaVisibleDevicesIsThePool() {
    QVERIFY(env_->ok());
    const std::string data = env_->corpus_excerpt(20000);
    {
      RunStore store("");
      RunQueue queue(store);
      for (const char* name : {"v0", "v1"}) {
        Config c;
        apply_overrides(c, test::quiet_run_overrides(data, 5));
        c.device = "cuda";
        QueueItem q;
        q.name = name, q.config_json = config_to_json(c, -1);
        store.transaction([&] { queue.add(q); });
      }
    }
    QProcess worker;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("CUDA_VISIBLE_DEVICES", "5,7");
    worker.setProcessEnvironment(env);
    worker.start(test::tokamak_bin(), {"queue", "work", "--parallel", "2", "--gpus-per-run", "1"});
    QVERIFY(worker.waitForFinished(300000));
    QVERIFY2(worker.exitCode() == 0, worker.readAllStandardError().constData());
    const QJsonObject list = test::run_tokamak({"queue", "list", "--json"}).json();
    std::set<QString> given;
    for (const char* name : {"v0", "v1"}) {
      const QJsonObject item = itemNamed(list, name);
      const QString gpus = item["gpus"].toString();
      QVERIFY2(gpus == "5" || gpus == "7", qPrintable(gpus));
      given.insert(gpus);
      QVERIFY2(item["error"].toString().contains("(CUDA_VISIBLE_DEVICES=" + gpus + ")"),
               qPrintable(item["error"].toString()));
    }
    QCOMPARE(given.size(), size_t(2));
  }

  void hostQueueGoesOnWithTheSshClientKilled() {
    QVERIFY(env_->ok());
    ssh_ = std::make_unique<test::SshHost>(*env_);
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    const std::string data = env_->corpus_excerpt(20000);
    std::map<QString, int> steps = {{"long", 400}, {"short", 8}};
    for (const auto& [name, n] : steps) {
      const test::CliResult r = test::run_tokamak(QStringList{"queue", "add", "--json", "--name", name} + where() +
                                                  test::set_args(test::quiet_run_overrides(data, n)));
      QVERIFY2(r.code == 0, r.err.constData());
      QCOMPARE(r.json()["name"].toString(), name);
      QVERIFY(r.json()["id"].toInteger() > 0);
    }
    // The first run trains on the host and the second waits for it: now the connection goes, SIGKILLed.
    QJsonObject list;
    QTRY_VERIFY_WITH_TIMEOUT((list = hostList(), itemNamed(list, "long")["state"].toString() != "queued"),
                             test::kPatienceMs);
    QCOMPARE(itemNamed(list, "long")["state"].toString(), QString("running"));
    QCOMPARE(itemNamed(list, "short")["state"].toString(), QString("queued"));
    const pid_t master = masterPid(ssh_->sshd().target(), sharedConnection());
    QVERIFY(master > 0);
    QCOMPARE(::kill(master, SIGKILL), 0);
    QTRY_VERIFY_WITH_TIMEOUT(::kill(master, 0) != 0, test::kPatienceMs);

    // The host's store, read there by its own tokamak: both runs trained to the end, the second started by a
    // worker nobody was connected to. Over a new connection, the same list.
    QTRY_VERIFY_WITH_TIMEOUT(settled(test::run_tokamak({"queue", "list", "--json"}, hostShell()).json()),
                             4 * test::kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(
        test::run_tokamak({"queue", "list", "--json"}, hostShell()).json()["worker_pid"].toInteger() == 0,
        test::kPatienceMs);
    const QJsonObject there = test::run_tokamak({"queue", "list", "--json"}, hostShell()).json();
    for (const auto& [name, n] : steps) {
      const QJsonObject item = itemNamed(there, name);
      QCOMPARE(item["state"].toString(), QString("done"));
      QVERIFY2(item["folder"].toString().startsWith(QString::fromStdString(ssh_->data())),
               qPrintable(item["folder"].toString()));
      QFile journal(item["folder"].toString() + "/events.jsonl");
      QVERIFY(journal.open(QIODevice::ReadOnly));
      int stepLines = 0;
      for (const QByteArray& line : journal.readAll().split('\n'))
        stepLines += QJsonDocument::fromJson(line).object()["event"].toString() == "step";
      QCOMPARE(stepLines, n);
    }
    QCOMPARE(itemNamed(there, "short")["started"].toDouble() >= itemNamed(there, "long")["ended"].toDouble(), true);
    const QJsonObject overSsh = hostList();
    QCOMPARE(overSsh, there);
    QCOMPARE(overSsh["items"].toArray().size(), 2);
    // The text form is the host's too.
    const test::CliResult text = test::run_tokamak(QStringList{"queue", "list"} + where());
    QVERIFY2(text.code == 0 && text.out.startsWith("queue of " + QByteArray::fromStdString(hostDb()) + ":"),
             text.out.constData());
    // Nothing of the host's queue is here.
    QVERIFY(test::run_tokamak({"queue", "list", "--json"}).json()["items"].toArray().isEmpty());
  }

  void hostSweepPlansAndQueuesAsHere() {
    QVERIFY(env_->ok());
    ssh_ = std::make_unique<test::SshHost>(*env_);
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    const std::string data = env_->corpus_excerpt(20000);
    Config c;  // the base, as `tokamak config --defaults` writes a config
    apply_overrides(c, test::quiet_run_overrides(data, 6));
    const QJsonObject base = QJsonDocument::fromJson(QByteArray::fromStdString(config_to_json(c))).object();
    const QJsonObject spec{{"name", "lr"},
                           {"base", base},
                           {"sweep", QJsonObject{{"optimizer.lr", QJsonArray{0.001, 0.003, 0.01}}}},
                           {"seeds", QJsonArray{1}}};
    const QString file = QString::fromStdString(env_->path("lr.json"));
    write_file_atomically(file.toStdString(), QJsonDocument(spec).toJson().toStdString());

    const test::CliResult here = test::run_tokamak({"sweep", file, "--dry-run", "--json"});
    QVERIFY2(here.code == 0, here.err.constData());
    const test::CliResult there = test::run_tokamak(QStringList{"sweep", file, "--dry-run", "--json"} + where());
    QVERIFY2(there.code == 0, there.err.constData());
    QCOMPARE(there.json(), here.json());
    QCOMPARE(there.json()["trials"].toArray().size(), 3);

    // Queued there (paused, so nothing trains): the host's sweep and queue, moved and removed from here.
    QCOMPARE(test::run_tokamak(QStringList{"queue", "pause"} + where()).code, 0);
    const test::CliResult queued = test::run_tokamak(QStringList{"sweep", file, "--json"} + where());
    QVERIFY2(queued.code == 0, queued.err.constData());
    const qint64 sweep = queued.json()["sweep_id"].toInteger();
    QVERIFY(sweep > 0);
    const test::CliResult status =
        test::run_tokamak(QStringList{"sweep", "status", QString::number(sweep), "--json"} + where());
    QVERIFY2(status.code == 0, status.err.constData());
    const QJsonArray trials = status.json()["trials"].toArray();
    QCOMPARE(trials.size(), 3);
    for (int i = 0; i < 3; ++i)
      QCOMPARE(trials[i].toObject()["name"].toString(),
               here.json()["trials"].toArray()[i].toObject()["name"].toString());
    QCOMPARE(status.out, test::run_tokamak({"sweep", "status", QString::number(sweep), "--json"}, hostShell()).out);
    const qint64 first = trials[0].toObject()["queue_id"].toInteger(),
                 last = trials[2].toObject()["queue_id"].toInteger();
    QCOMPARE(test::run_tokamak(QStringList{"queue", "move", QString::number(last), "--to", "0"} + where()).code, 0);
    const test::CliResult removed = test::run_tokamak(QStringList{"queue", "remove", QString::number(first)} + where());
    QVERIFY2(removed.code == 0 && removed.err.contains("removed queue item"), removed.err.constData());
    const QJsonObject list = hostList();
    QVERIFY(list["paused"].toBool());
    const QJsonArray items = list["items"].toArray();
    QCOMPARE(items.size(), 2);
    QCOMPARE(items[0].toObject()["id"].toInteger(), last);
    QCOMPARE(items[0].toObject()["index"].toInteger(), qint64(0));
    QCOMPARE(items[1].toObject()["state"].toString(), QString("queued"));
    QVERIFY(test::run_tokamak({"queue", "list", "--json"}).json()["items"].toArray().isEmpty());  // not here
  }

  void badHostsAreOneLine() {
    QVERIFY(env_->ok());
    ssh_ = std::make_unique<test::SshHost>(*env_);
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
    // Nothing listens on port 1.
    test::CliResult r = test::run_tokamak({"queue", "list", "--host", "127.0.0.1:1", "--ssh-config", "/dev/null"});
    QVERIFY2(r.code == 1 && r.err.startsWith("tokamak: cannot reach 127.0.0.1:1: connection refused") &&
                 r.err.count('\n') == 1,
             r.err.constData());
    QStringList noTokamak = where();
    noTokamak[noTokamak.indexOf("--tokamak") + 1] = "/nonexistent/tokamak";
    r = test::run_tokamak(QStringList{"queue", "add", "--set", "train.steps=3"} + noTokamak);
    QVERIFY2(r.code == 1 &&
                 r.err.startsWith("tokamak: Tokamak is not installed on " +
                                  QByteArray::fromStdString(ssh_->sshd().target().spec())) &&
                 r.err.count('\n') == 1,
             r.err.constData());
    // The host's own refusal, naming the file as it is called here.
    const std::string file = env_->path("bad.json");
    write_file_atomically(file, R"({"name": "x", "sweep": {"train.lrr": [0.1]}})");
    r = test::run_tokamak(QStringList{"sweep", QString::fromStdString(file), "--dry-run"} + where());
    QVERIFY2(r.code == 1 && r.err.startsWith("tokamak: " + QByteArray::fromStdString(file) + ": ") &&
                 r.err.contains("optimizer.lr") && r.err.count('\n') == 1,
             r.err.constData());
    r = test::run_tokamak(QStringList{"queue", "add", "--set", "train.stepz=3"} + where());
    QVERIFY2(r.code == 1 && r.err.contains("did you mean 'train.steps'") && r.err.count('\n') == 1, r.err.constData());
    QVERIFY(hostList()["items"].toArray().isEmpty());  // nothing half-queued there
  }
};

QTEST_GUILESS_MAIN(TestQueueRemote)
#include "test_queue_remote.moc"
