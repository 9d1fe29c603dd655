// The studio's Queue dock (ui/queue) over this computer's real queue: the order it shows is the store's (also
// after another process moves a run), a drag or Up/Down in the dock moves the run in the store, Remove takes a
// waiting run out, Pause stops new starts while the run going on goes on, "Run next now" puts a run first and
// starts it, Run ladder… queues every rung × seed with the rung's config, "Compare ladder" fills as rungs run,
// and the queue survives the studio: a studio (this suite run again as a child, TOKAMAK_TEST_QUEUE_CHILD set)
// queues three tiny runs and is SIGKILLed, the runs go on and finish, and a new studio shows them done.
#include <QRegularExpression>
#include <QApplication>
#include <QDeadlineTimer>
#include <QMimeData>
#include <QProcess>
#include <QSpinBox>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include <csignal>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/base/run/journal.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/base/run/run_folder.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/queue/ladder_queue.h"
#include "ui/queue/queue_dock.h"
#include "ui/queue/queue_model.h"
#include "ui/live/run_controller.h"
#include "ui/setup/setup_panel.h"
#include "ui/history/compare_view.h"
#include "ui/history/runs_panel.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

std::vector<std::string> tinySets(const std::string& data, int64_t steps) {
  return test::quiet_run_overrides(data, static_cast<int>(steps), {"speed.precision=fp32"});
}

Config tinyRun(const std::string& data, int64_t steps, const std::string& name) {
  Config c;
  std::vector<std::string> sets = tinySets(data, steps);
  sets.push_back("name=" + name);
  apply_overrides(c, sets);
  return c;
}

// The store's queue as `tokamak queue list` orders it, read on a connection of its own.
std::vector<QueueItem> storeQueue() {
  RunStore store;
  return RunQueue(store).list();
}

QStringList storeNames(const QString& state = {}) {
  QStringList names;
  for (const QueueItem& q : storeQueue())
    if (state.isEmpty() || q.state == state.toStdString()) names << QString::fromStdString(q.name);
  return names;
}

QStringList dockNames(QueueDock* dock, const QString& state = {}) {
  QStringList names;
  for (const QueueRow& r : dock->model()->rows())
    if (state.isEmpty() || r.state == state) names << r.name;
  return names;
}

QueueItem storeItem(const QString& name) {
  for (const QueueItem& q : storeQueue())
    if (q.name == name.toStdString()) return q;
  return {};
}

qint64 dockId(QueueDock* dock, const QString& name) {
  for (const QueueRow& r : dock->model()->rows())
    if (r.name == name) return r.id;
  return 0;
}

bool allEnded() {
  for (const QueueItem& q : storeQueue())
    if (q.state == "queued" || q.state == "running") return false;
  return true;
}

// Child mode: a studio that queues the configs of the file named by TOKAMAK_TEST_QUEUE_CHILD through its dock,
// says so on stdout once the queue's worker is working, and waits to be killed.
int queueChild() {
  const nlohmann::json configs =
      nlohmann::json::parse(read_file(qEnvironmentVariable("TOKAMAK_TEST_QUEUE_CHILD").toStdString()));
  MainWindow w;
  w.setCloseQuestion([] { return int(MainWindow::CloseKeepTraining); });
  w.show();
  QStringList jsons;
  for (const auto& c : configs) jsons << QString::fromStdString(c.dump());
  if (!w.queueRuns(jsons)) {
    std::printf("FAILED %s\n", qPrintable(w.queueDock()->message()));
    return 1;
  }
  QDeadlineTimer deadline(test::kPatienceMs);
  while (w.queueDock()->workerPid() <= 0 && !deadline.hasExpired()) QTest::qWait(50);
  std::printf("QUEUED %lld\n", static_cast<long long>(w.queueDock()->workerPid()));
  std::fflush(stdout);
  for (;;) QTest::qWait(1000);  // until SIGKILLed
}

}  // namespace

class TestStudioQueue : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::string data_;

 private Q_SLOTS:
  // Each test its own data folder, so its own run store and queue.
  void init() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY2(env_->ok(), "assets missing: run scripts/setup.sh");
    data_ = env_->corpus_excerpt(20000);
  }

  // A worker and runs a failed test left going are ended here, by pid.
  void cleanup() {
    const long worker = queue_worker_pid("");
    if (worker > 0) ::kill(static_cast<pid_t>(worker), SIGKILL);
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    env_.reset();
  }

  void orderShownIsTheStoresOrder() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY2(dock->addConfigs({tinyRun(data_, 3, "q-a"), tinyRun(data_, 3, "q-b"), tinyRun(data_, 3, "q-c")}),
             qPrintable(dock->message()));
    QCOMPARE(dockNames(dock), storeNames());
    QCOMPARE(dockNames(dock), QStringList({"q-a", "q-b", "q-c"}));
    for (int i = 0; i < 3; ++i) QCOMPARE(dock->model()->rows()[i].index, i);
    QCOMPARE(dock->model()->index(0, QueueModel::Order).data().toInt(), 1);
    QCOMPARE(dock->model()->index(0, QueueModel::Target).data().toString(), QString("this computer"));
    // Another process reorders: the dock follows the store.
    QCOMPARE(
        test::run_tokamak({"queue", "move", QString::number(storeItem("q-c").id), "--to", "0"}, {}, test::kPatienceMs)
            .code,
        0);
    QTRY_COMPARE_WITH_TIMEOUT(dockNames(dock), QStringList({"q-c", "q-a", "q-b"}), test::kPatienceMs);
    QCOMPARE(dockNames(dock), storeNames());
    QVERIFY(dock->paused());
    QCOMPARE(dock->workerPid(), qint64(0));  // paused: nothing was started
    // A config the validator refuses queues nothing, and says which run and why.
    Config bad = tinyRun(data_, 3, "q-bad");
    bad.train.batch_size = 0;
    QVERIFY(!dock->addConfigs({tinyRun(data_, 3, "q-d"), bad}));
    QVERIFY2(dock->message().contains("q-bad") && dock->message().contains("batch_size"), qPrintable(dock->message()));
    QCOMPARE(storeNames().size(), 3);
  }

  // "at once" and "GPUs each" are the store's queue settings, the ones the worker reads at every pass (and
  // `tokamak queue list` prints): set from the dock they are in the store; set by another process, the dock
  // shows them.
  void runsAtOnceAndGpusEachAreTheStoresSettings() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    auto* parallel = dock->findChild<QSpinBox*>("queueParallel");
    auto* gpus = dock->findChild<QSpinBox*>("queueGpusPerRun");
    QVERIFY(parallel && gpus);
    QCOMPARE(parallel->value(), 1);
    QCOMPARE(gpus->value(), 1);
    parallel->setValue(2);
    gpus->setValue(0);
    {
      RunStore store;
      QCOMPARE(RunQueue(store).parallel(), int64_t{2});
      QCOMPARE(RunQueue(store).gpus_per_run(), int64_t{0});
    }
    const test::CliResult list = test::run_tokamak({"queue", "list", "--json"}, {}, test::kPatienceMs);
    QCOMPARE(list.code, 0);
    const nlohmann::json j = nlohmann::json::parse(list.out.toStdString());
    QCOMPARE(j["parallel"].get<int64_t>(), int64_t{2});
    QCOMPARE(j["gpus_per_run"].get<int64_t>(), int64_t{0});
    {
      RunStore store;
      RunQueue(store).set_parallel(3);
      RunQueue(store).set_gpus_per_run(2);
    }
    QTRY_COMPARE_WITH_TIMEOUT(parallel->value(), 3, test::kPatienceMs);
    QCOMPARE(gpus->value(), 2);
    {
      RunStore store;
      QCOMPARE(RunQueue(store).parallel(), int64_t{3});  // showing it did not write it back as something else
    }
  }

  void reorderInTheDockMovesTheStoresOrder() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY(dock->addConfigs({tinyRun(data_, 3, "r-a"), tinyRun(data_, 3, "r-b"), tinyRun(data_, 3, "r-c")}));
    QCOMPARE(dock->view()->dragDropMode(), QAbstractItemView::InternalMove);
    QueueModel* m = dock->model();
    // Dragged from the last place to between-rows 0: first.
    std::unique_ptr<QMimeData> drag(m->mimeData({m->index(2, QueueModel::Name)}));
    QVERIFY(drag);
    m->dropMimeData(drag.get(), Qt::MoveAction, 0, 0, {});
    QCOMPARE(storeNames(), QStringList({"r-c", "r-a", "r-b"}));
    QCOMPARE(dockNames(dock), storeNames());
    // Dropped onto the last row: it takes that place.
    drag.reset(m->mimeData({m->index(0, QueueModel::Name)}));
    m->dropMimeData(drag.get(), Qt::MoveAction, -1, -1, m->index(2, QueueModel::Name));
    QCOMPARE(storeNames(), QStringList({"r-a", "r-b", "r-c"}));
    // Up and Down on the selected run.
    dock->selectItem(dockId(dock, "r-c"));
    auto* up = dock->findChild<QToolButton*>("queueUp");
    QVERIFY(up && up->isEnabled());
    up->click();
    QCOMPARE(storeNames(), QStringList({"r-a", "r-c", "r-b"}));
    QCOMPARE(dock->selectedId(), dockId(dock, "r-c"));  // the selection follows the run
    up->click();
    QCOMPARE(storeNames(), QStringList({"r-c", "r-a", "r-b"}));
    QVERIFY(!up->isEnabled());  // first already
    dock->findChild<QToolButton*>("queueDown")->click();
    QCOMPARE(storeNames(), QStringList({"r-a", "r-c", "r-b"}));
    QCOMPARE(dockNames(dock), storeNames());
  }

  void removeTakesAWaitingRunOut() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY(dock->addConfigs({tinyRun(data_, 3, "x-a"), tinyRun(data_, 3, "x-b")}));
    const qint64 a = dockId(dock, "x-a");
    dock->selectItem(a);
    dock->findChild<QToolButton*>("queueRemove")->click();
    QCOMPARE(dockNames(dock), QStringList({"x-b"}));
    QCOMPARE(storeNames(), QStringList({"x-b"}));
    RunStore store;
    QCOMPARE(QString::fromStdString(RunQueue(store).item(a).state), QString("removed"));
    QVERIFY(!dock->removeItem(a));  // gone already: refused with the reason
    QVERIFY2(dock->message().contains("nothing to remove"), qPrintable(dock->message()));
  }

  // Pause: the run going on goes on, the next one does not start until Resume; a running run is not removed.
  void pauseStopsNewStarts() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    // p-long runs long enough to be paused under (its end comes by itself: `runs control stop` has a test of
    // its own in test_detach, and compareLadderFillsAsRungsRun stops a queue run that way).
    QVERIFY(dock->addConfigs({tinyRun(data_, 1000, "p-long"), tinyRun(data_, 3, "p-next")}));
    QTRY_VERIFY_WITH_TIMEOUT(storeItem("p-long").state == "running", test::kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(dockNames(dock, "running") == QStringList({"p-long"}), test::kPatienceMs);
    QVERIFY(dock->workerPid() > 0);
    // A running row says where its run is and the run's own estimate of the time left.
    const auto runCell = [dock] {
      const int row = dock->model()->rowOfId(dockId(dock, "p-long"));
      return dock->model()->data(dock->model()->index(row, QueueModel::RunState), Qt::DisplayRole).toString();
    };
    const QRegularExpression progress("^running · step [1-9][0-9]* · [0-9hms ]+ left$");
    QTRY_VERIFY2_WITH_TIMEOUT(progress.match(runCell()).hasMatch(), qPrintable(runCell()), test::kPatienceMs);
    auto* pause = dock->findChild<QToolButton*>("queuePause");
    pause->click();
    QVERIFY(dock->paused());
    QCOMPARE(pause->text(), QString("Resume queue"));
    QVERIFY(!dock->removeItem(dockId(dock, "p-long")));
    QVERIFY2(dock->message().contains("runs control"), qPrintable(dock->message()));
    // The live page follows the run the queue started, as it would a run started here.
    QTRY_COMPARE_WITH_TIMEOUT(w.runController()->runUid(), QString::fromStdString(storeItem("p-long").run_uid),
                              test::kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(storeItem("p-long").state == "done", 4 * test::kPatienceMs);
    // Nothing new started: the worker has nothing it may do and ends; the next run still waits.
    QTRY_COMPARE_WITH_TIMEOUT(dock->workerPid(), qint64(0), test::kPatienceMs);
    QCOMPARE(storeItem("p-next").state, std::string("queued"));
    QVERIFY(storeItem("p-next").run_uid.empty());
    QCOMPARE(dockNames(dock, "queued"), QStringList({"p-next"}));
    pause->click();
    QVERIFY(!dock->paused());
    QTRY_VERIFY_WITH_TIMEOUT(storeItem("p-next").state == "done", test::kPatienceMs);
    QTRY_COMPARE_WITH_TIMEOUT(dockNames(dock, "done"), QStringList({"p-next", "p-long"}),
                              test::kPatienceMs);  // newest first
  }

  // "Run next now" on the last of three waiting runs of a paused queue: it moves first, the queue works, and it
  // is the first of them to start.
  void runNextNowStartsItFirst() {
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY(dock->addConfigs({tinyRun(data_, 3, "n-a"), tinyRun(data_, 3, "n-b"), tinyRun(data_, 3, "n-c")}));
    dock->selectItem(dockId(dock, "n-c"));
    dock->findChild<QToolButton*>("queueRunNow")->click();
    QVERIFY(!dock->paused());
    QTRY_VERIFY_WITH_TIMEOUT(allEnded(), 120000);
    const QueueItem a = storeItem("n-a"), b = storeItem("n-b"), c = storeItem("n-c");
    QCOMPARE(a.state + b.state + c.state, std::string("donedonedone"));
    QVERIFY2(c.started < a.started && a.started < b.started, "the queue's order is not the order of the starts");
  }

  void runLadderQueuesRungsTimesSeeds() {
    QList<qint64> seeds;
    QString error;
    QVERIFY(parseSeeds(" 1, 2 3", &seeds, &error));
    QCOMPARE(seeds, QList<qint64>({1, 2, 3}));
    QVERIFY(!parseSeeds("1,x", &seeds, &error));
    QVERIFY2(error.contains("\"x\""), qPrintable(error));
    QCOMPARE(ladderOf("tiny-ladder/fused AdamW-s2"), QString("tiny-ladder"));
    QCOMPARE(ladderOf("plain-run"), QString());

    const QString ladder = writeLadder("tiny-ladder", 3);
    MainWindow w;
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY2(w.runLadder(ladder, {1, 2}), qPrintable(dock->message()));
    const QStringList names = {"tiny-ladder/scratch-s1", "tiny-ladder/scratch-s2",    "tiny-ladder/native-s1",
                               "tiny-ladder/native-s2",  "tiny-ladder/fused adam-s1", "tiny-ladder/fused adam-s2"};
    QCOMPARE(storeNames(), names);
    QCOMPARE(dockNames(dock), names);
    for (const QueueItem& q : storeQueue()) {
      const Config c = config_from_json(q.config_json);
      const QString name = QString::fromStdString(q.name);
      QCOMPARE(c.train.seed, name.endsWith("-s1") ? int64_t(1) : int64_t(2));
      QCOMPARE(c.name, q.name);
      QCOMPARE(c.model.n_embd, int64_t(32));  // the ladder's base
      QCOMPARE(c.train.steps, int64_t(3));
      // Cumulative: each rung on top of the one before.
      QCOMPARE(QString::fromStdString(name_of(c.speed.layers)),
               name.contains("scratch") ? QString("scratch") : QString("native"));
      QCOMPARE(c.speed.fused_adamw, name.contains("fused"));
    }
    // One seed: the bench's names without the seed; a bad file queues nothing and says why.
    QVERIFY(w.runLadder(ladder, {7}));
    QCOMPARE(storeNames().mid(6), QStringList({"tiny-ladder/scratch", "tiny-ladder/native", "tiny-ladder/fused adam"}));
    QCOMPARE(config_from_json(storeItem("tiny-ladder/native").config_json).train.seed, int64_t(7));
    QVERIFY(!w.runLadder(QString::fromStdString(env_->path("missing.json")), {1}));
    QVERIFY2(dock->message().contains("missing.json"), qPrintable(dock->message()));
    QCOMPARE(storeNames().size(), 9);
  }

  // "Compare ladder" shows the ladder's runs on the runs page and adds the next rung when it runs.
  void compareLadderFillsAsRungsRun() {
    const QString ladder = writeLadder("cmp-ladder", 3);
    MainWindow w;
    w.show();
    QueueDock* dock = w.queueDock();
    QVERIFY(dock->setPaused(true));
    QVERIFY(w.runLadder(ladder, {1}));
    // A long run between the first rung and the others holds them back until it is stopped.
    QVERIFY(dock->addConfigs({tinyRun(data_, 100000, "cmp-blocker")}));
    QVERIFY(dock->moveItem(dockId(dock, "cmp-blocker"), 1));
    QVERIFY(!w.compareLadder("cmp-ladder"));  // nothing has run yet
    QVERIFY(dock->setPaused(false));
    QTRY_VERIFY_WITH_TIMEOUT(storeItem("cmp-blocker").state == "running", 120000);
    QCOMPARE(storeItem("cmp-ladder/scratch").state, std::string("done"));
    dock->selectItem(dockId(dock, "cmp-ladder/scratch"));
    auto* compare = dock->findChild<QToolButton*>("queueCompareLadder");
    QVERIFY(compare->isEnabled());
    compare->click();
    CompareView* view = w.runsPanel()->compareView();
    QCOMPARE(view->runIds().size(), 1);
    QCOMPARE(view->grouping(), QString("seed"));
    // The row is running from the moment the worker claims it; its engine takes the stop once it has started (on a
    // loaded machine, seconds later): asked again until it does.
    const QString blocker = QString::fromStdString(storeItem("cmp-blocker").run_uid);
    QTRY_COMPARE_WITH_TIMEOUT(test::run_tokamak({"runs", "control", blocker, "stop"}, {}, test::kPatienceMs).code, 0,
                              test::kPatienceMs);
    QTRY_VERIFY_WITH_TIMEOUT(allEnded(), 120000);
    QTRY_COMPARE_WITH_TIMEOUT(view->runIds().size(), 3, test::kPatienceMs);
    RunStore store;
    for (qint64 id : view->runIds()) QVERIFY(QString::fromStdString(store.run(id).name).startsWith("cmp-ladder/"));
  }

  // Not a test: docs/screenshots/queue.png (scripts/screenshot-queue.sh runs it under Xvfb with
  // TOKAMAK_SCREENSHOT_OUT set): the first window as a new user sees it, with two tiny runs queued, the first
  // training on the live page, and the Queue tab raised.
  void screenshot() {
    const QString out = qEnvironmentVariable("TOKAMAK_SCREENSHOT_OUT");
    if (out.isEmpty()) QSKIP("set TOKAMAK_SCREENSHOT_OUT to grab the Queue dock");
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QueueDock* dock = w.queueDock();
    Config first = tinyRun(data_, 400, "tiny-seed1");
    first.eval.every = 50;
    Config second = first;
    second.name = "tiny-seed2", second.train.seed = 2;
    QVERIFY2(dock->addConfigs({first, second}), qPrintable(dock->message()));
    dock->raise();
    QTRY_VERIFY_WITH_TIMEOUT(w.runController()->lastStep().step >= 120, 120000);
    dock->selectItem(dockId(dock, "tiny-seed2"));
    QTest::qWait(1500);  // a poll of the dock and a redraw of the plots
    QVERIFY(w.grab().save(out));
    QVERIFY(dock->setPaused(true));
    w.stopRun();
    QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->isActive(), test::kPatienceMs);
  }

  // The queue outlives the studio: SIGKILLed after queueing, its runs go on to the end, and the next studio
  // shows them in their states.
  // One detached start: a run started from the studio's Start leaves what the queue's worker leaves for the
  // same config — the same files in its folder, the same config.json (but its name), the same journal (its
  // events in order, the same config in its start event; not the dataset's progress, which only the first run
  // reports: the second finds it prepared) and the same end — because both are the same steps
  // (engine/base/run/run_launch.h: start_run_detached's folder and config.json, then launch_detached).
  void studioRunLeavesWhatTheQueueLeaves() {
    MainWindow w;
    w.setCloseQuestion([] { return int(MainWindow::CloseKeepTraining); });
    w.setupPanel()->setConfig(tinyRun(data_, 3, "same-studio"));
    w.startAction()->trigger();
    RunController* run = w.runController();
    QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), test::kPatienceMs);
    QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("finished"));
    const RunFolder studio = find_run_folder(run->runUid().toStdString());

    QVERIFY2(w.queueDock()->addConfigs({tinyRun(data_, 3, "same-queued")}), qPrintable(w.queueDock()->message()));
    QTRY_VERIFY_WITH_TIMEOUT(allEnded(), test::kPatienceMs);
    const QueueItem item = storeItem("same-queued");
    QCOMPARE(QString::fromStdString(item.state), QString("done"));
    const RunFolder queued{item.folder};

    const auto files = [](const RunFolder& f) {
      QStringList names = QDir(QString::fromStdString(f.path)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
      names.sort();
      return names;
    };
    QCOMPARE(files(studio), files(queued));
    QVERIFY2(files(studio).contains("config.json") && files(studio).contains("events.jsonl"),
             qPrintable(files(studio).join(' ')));
    const auto json = [](const RunFolder& f, const std::string& name) {
      return nlohmann::json::parse(read_file(f.path + "/" + name));
    };
    const auto withoutName = [](nlohmann::json j) {
      j.erase("name");
      return j;
    };
    QCOMPARE(withoutName(json(studio, "config.json")).dump(), withoutName(json(queued, "config.json")).dump());
    QCOMPARE(json(studio, "run.json")["name"].get<std::string>(), std::string("same-studio"));
    QCOMPARE(json(queued, "run.json")["name"].get<std::string>(), std::string("same-queued"));
    QCOMPARE(json(studio, "run.json")["host"], json(queued, "run.json")["host"]);
    QCOMPARE(json(studio, "exit")["status"], json(queued, "exit")["status"]);
    const auto journal = [](const RunFolder& f, nlohmann::json* config) {
      QStringList events;
      uint64_t next = 0;
      for (const JournalLine& line : read_journal(f.journal(), 0, &next)) {
        const nlohmann::json e = nlohmann::json::parse(line.text);
        // Progress is the dataset's preparation, which only the first of the two runs does (the cache).
        if (e.value("event", "") != "progress") events << QString::fromStdString(e.value("event", ""));
        if (e.value("event", "") == "start") *config = e.value("config", nlohmann::json{});
      }
      return events;
    };
    nlohmann::json studioStart, queuedStart;
    const QStringList studioEvents = journal(studio, &studioStart), queuedEvents = journal(queued, &queuedStart);
    QVERIFY2(studioEvents == queuedEvents, qPrintable(studioEvents.join(' ') + " | " + queuedEvents.join(' ')));
    QVERIFY2(studioEvents.startsWith("start") && studioEvents.endsWith("end"), qPrintable(studioEvents.join(' ')));
    QVERIFY(!studioStart.is_null());
    QCOMPARE(withoutName(studioStart).dump(), withoutName(queuedStart).dump());
  }

  void queueSurvivesTheStudioKilled() {
    nlohmann::json configs = nlohmann::json::array();
    for (const char* name : {"k-1", "k-2", "k-3"})
      configs.push_back(nlohmann::json::parse(config_to_json(tinyRun(data_, 20, name))));
    const std::string file = env_->path("queue-child.json");
    write_file_atomically(file, configs.dump());
    QProcess studio;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TOKAMAK_TEST_QUEUE_CHILD", QString::fromStdString(file));
    studio.setProcessEnvironment(env);
    studio.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    studio.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(studio.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(studio.canReadLine(), 120000);
    const QByteArray line = studio.readLine().trimmed();
    QVERIFY2(line.startsWith("QUEUED ") && line.mid(7).toLongLong() > 0, line.constData());
    QCOMPARE(::kill(static_cast<pid_t>(studio.processId()), SIGKILL), 0);
    QVERIFY(studio.waitForFinished(10000));
    QVERIFY2(!allEnded(), "the runs ended before the studio was killed: nothing was left to survive it");
    QStringList queued = storeNames();
    queued.sort();
    QCOMPARE(queued, QStringList({"k-1", "k-2", "k-3"}));

    QTRY_VERIFY_WITH_TIMEOUT(allEnded(), 180000);
    for (const char* name : {"k-1", "k-2", "k-3"}) {
      const QueueItem q = storeItem(name);
      QCOMPARE(QString::fromStdString(q.state), QString("done"));
      RunStore store;
      QCOMPARE(QString::fromStdString(store.run(store.find_uid(q.run_uid)).status), QString("finished"));
    }
    MainWindow again;
    QueueDock* dock = again.queueDock();
    QTRY_COMPARE_WITH_TIMEOUT(dock->model()->rowCount(), 3, test::kPatienceMs);
    QCOMPARE(dockNames(dock, "done").size(), 3);
    for (const char* name : {"k-1", "k-2", "k-3"}) QVERIFY(dockNames(dock).contains(name));
  }

 private:
  // A 3-rung cumulative ladder on the tiny model: scratch layers, native layers, fused AdamW.
  QString writeLadder(const std::string& name, int64_t steps) {
    nlohmann::json base = nlohmann::json::object();
    for (const std::string& kv : tinySets(data_, steps)) base[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    base["speed.fused_adamw"] = false;  // on by default: the third rung turns it on
    const nlohmann::json ladder = {{"name", name},
                                   {"base", base},
                                   {"rungs",
                                    {{{"name", "scratch"}, {"set", {{"speed.layers", "scratch"}}}},
                                     {{"name", "native"}, {"set", {{"speed.layers", "native"}}}},
                                     {{"name", "fused adam"}, {"set", {{"speed.fused_adamw", true}}}}}}};
    const std::string path = env_->path(name + ".json");
    write_file_atomically(path, ladder.dump(2));
    return QString::fromStdString(path);
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (qEnvironmentVariableIsSet("TOKAMAK_TEST_QUEUE_CHILD")) return queueChild();
  TestStudioQueue t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_studio_queue.moc"
