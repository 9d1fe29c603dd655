// One event path for local runs: a run started from the studio on this computer trains detached and
// is followed through its journal, so it outlives the studio. A studio process SIGKILLed mid-run (this suite
// run again as a child, with TOKAMAK_TEST_STUDIO_CHILD set) leaves the run training; the next studio lists it,
// re-attaches by itself, replays its whole history into the plots, stops it, and the store then holds exactly the
// journal's events. A studio closed with "Keep training" does the same, and with two live runs the picker
// chooses which one the live page follows while the other trains and records itself unwatched.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDeadlineTimer>
#include <QDir>
#include <QProcess>
#include <QStatusBar>
#include <QtTest>

#include <csignal>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/base/run/journal.h"
#include "engine/base/run/run_folder.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/live/live_runs.h"
#include "ui/live/run_controller.h"
#include "ui/samples/samples_panel.h"
#include "ui/setup/setup_panel.h"
#include "ui/status/run_status.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

Config tinyRun(const std::string& data, int64_t steps, const std::string& name) {
  Config c;
  apply_overrides(
      c, test::tiny_run_overrides({"data.path=" + data, "train.batch_size=2", "train.log_every=1", "sample.every=25",
                                   "sample.tokens=8", "eval.every=0", "threads=1", "speed.precision=fp32",
                                   "train.steps=" + std::to_string(steps), "name=" + name}));
  return c;
}

bool alive(qint64 pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0; }

// Ended: gone, or a zombie that its new parent has not reaped yet.
bool ended(qint64 pid) {
  QFile f(QString("/proc/%1/stat").arg(pid));
  if (!f.open(QIODevice::ReadOnly)) return true;
  const QByteArray stat = f.readAll();
  return stat.mid(stat.lastIndexOf(')') + 2, 1) == "Z";
}

RunFolder folderOf(const QString& uid) { return find_run_folder(uid.toStdString()); }

// The store's rows of the run equal its journal: every step once, every sample once, the same end. *stepLines:
// how many step events the journal holds.
void storeEqualsJournal(const QString& uid, const QString& status, int* stepLines = nullptr) {
  uint64_t next = 0;
  std::set<int64_t> steps;
  int samples = 0, lines = 0;
  for (const JournalLine& l : read_journal(folderOf(uid).journal(), 0, &next, 1 << 26)) {
    auto j = nlohmann::json::parse(l.text);
    ++lines;
    if (j["event"] == "step") QVERIFY2(steps.insert(j["step"].get<int64_t>()).second, "a step twice in the journal");
    samples += j["event"] == "sample";
  }
  QVERIFY(lines > 0 && samples > 0);
  if (stepLines) *stepLines = int(steps.size());
  RunStore store;
  const int64_t id = store.find_uid(uid.toStdString());
  QVERIFY(id > 0);
  const auto rows = store.metrics(id);
  QCOMPARE(rows.size(), steps.size());
  std::set<int64_t> stored;
  for (const auto& r : rows) stored.insert(r.step);
  QVERIFY(stored == steps);
  QCOMPARE(int(store.samples(id).size()), samples);
  QCOMPARE(QString::fromStdString(store.run(id).status), status);
}

// Child mode: a studio that starts a run, says so on stdout once it is live, and waits to be killed.
int studioChild() {
  const Config c = config_from_json(read_file(qEnvironmentVariable("TOKAMAK_TEST_STUDIO_CHILD").toStdString()));
  MainWindow w;
  w.setupPanel()->setConfig(c);
  w.startRun();
  RunController* rc = w.runController();
  QDeadlineTimer deadline(120000);
  while (!(rc->lastStep().step >= 5 && w.samplesPanel()->sampleCount() > 0) && !deadline.hasExpired()) QTest::qWait(50);
  std::printf("LIVE %s %lld %lld\n", rc->runUid().toUtf8().constData(), static_cast<long long>(rc->processId()),
              static_cast<long long>(rc->readerPid()));
  std::fflush(stdout);
  for (;;) QTest::qWait(1000);  // until SIGKILLed
}

}  // namespace

class TestStudioJournal : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::string data_;

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    data_ = env_->corpus_excerpt(20000);
  }

  // A run a failed test left training is ended here, by pid (run_reaper.h).
  void cleanup() { test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString()); }

  void runOutlivesKilledStudioAndIsReattached() {
    const std::string config = env_->path("killed.json");
    write_file_atomically(config, config_to_json(tinyRun(data_, 100000, "journal-killed")));
    QProcess studio;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("TOKAMAK_TEST_STUDIO_CHILD", QString::fromStdString(config));
    studio.setProcessEnvironment(env);
    studio.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    studio.start(QCoreApplication::applicationFilePath(), {});
    QVERIFY(studio.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(studio.canReadLine(), 120000);
    const QList<QByteArray> live = studio.readLine().trimmed().split(' ');
    QCOMPARE(live.size(), 4);
    QCOMPARE(live[0], QByteArray("LIVE"));
    const QString uid = QString::fromUtf8(live[1]);
    const qint64 runPid = live[2].toLongLong(), readerPid = live[3].toLongLong();
    QVERIFY(uid.size() == 16 && alive(runPid) && alive(readerPid));

    // The studio process dies at once, with no chance to say goodbye.
    QCOMPARE(::kill(static_cast<pid_t>(studio.processId()), SIGKILL), 0);
    QVERIFY(studio.waitForFinished(10000));
    QTRY_VERIFY_WITH_TIMEOUT(ended(readerPid), test::kPatienceMs);  // its reader ends too
    QVERIFY2(alive(runPid) && run_process_alive(folderOf(uid)), "the run must train on without the studio");
    const uint64_t bytesThen = read_run_state(folderOf(uid)).journal_bytes;
    QTRY_VERIFY_WITH_TIMEOUT(read_run_state(folderOf(uid)).journal_bytes > bytesThen, 30000);  // nobody reads

    // The next studio finds it, follows it again and replays its history into the plots.
    MainWindow w;
    RunController* rc = w.runController();
    QVERIFY(rc->isActive());
    QCOMPARE(rc->runUid(), uid);
    QCOMPARE(rc->processId(), runPid);
    // It trains on under the new studio, which stops it.
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step > 30, 120000);
    QVERIFY(w.samplesPanel()->sampleCount() > 0);  // replayed from the journal
    w.stopAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), 120000);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("stopped"));
    int steps = 0;
    storeEqualsJournal(uid, "stopped", &steps);
    QCOMPARE(w.livePlots()->trainPoints(), steps);  // every step, the ones before the re-attach included
  }

  // The studio reads a run's journal with the engine's codec, so what only that codec knew reaches the window:
  // a dataset warning (before the start) and a skipped step stay in the run's read-out in the status bar, next
  // to the steps drawn from the same journal (its own decoder knew neither event).
  void skippedStepsAndDatasetWarningsShow() {
    using nlohmann::json;
    const std::string uid = new_run_uid();
    const RunFolder f{run_folder_path("journal-notes", uid)};
    create_run_folder(f, {uid, "journal-notes", "", f.path, 1.0});  // long created: not "starting"
    Config c = tinyRun("default", 3, "journal-notes");
    const std::string warning = "skipped 2 files that are not UTF-8 text under the dataset folder (a.bin, b.bin)";
    // The lines as app/tokamak-engine/printer.cpp writes them.
    const std::vector<json> events = {
        {{"event", "warning"}, {"message", warning}},
        {{"event", "start"},
         {"run_uid", uid},
         {"name", "journal-notes"},
         {"steps", 3},
         {"start_step", 0},
         {"device", "cpu"},
         {"dataset", "default"},
         {"config", json::parse(config_to_json(c, -1))}},
        {{"event", "step"}, {"step", 1}, {"tokens", 64}, {"wall_s", 0.1}, {"loss", 10.9}, {"tok_s", 640.0}},
        {{"event", "skip"}, {"step", 2}, {"reason", "loss is nan"}, {"in_a_row", 1}, {"total", 1}},
        {{"event", "step"}, {"step", 3}, {"tokens", 192}, {"wall_s", 0.3}, {"loss", 10.7}, {"tok_s", 640.0}},
        {{"event", "end"}, {"status", "finished"}, {"step", 3}, {"tokens", 192}, {"wall_s", 0.3}}};
    std::string journal;
    for (const json& e : events) journal += e.dump() + "\n";
    write_file_atomically(f.journal(), journal);
    write_exit_file(f, "finished", 0, "");

    MainWindow w;
    w.show();
    RunController* rc = w.runController();
    QVERIFY(rc->attach({}, "tokamak", QString::fromStdString(f.path)));
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), test::kPatienceMs);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("finished"));
    QCOMPARE(w.livePlots()->trainPoints(), 2);
    RunStatus* status = w.runStatus();
    QVERIFY2(status->skipsText().contains("1 step skipped (step 2: loss is nan)"), qPrintable(status->text()));
    QVERIFY2(status->warningsText().startsWith("1 dataset warning: skipped 2 files"), qPrintable(status->text()));
    QCOMPARE(status->findChild<QLabel*>("runWarnings")->toolTip(), QString::fromStdString(warning));
    QVERIFY(status->findChild<QLabel*>("runSkips")->toolTip().startsWith(status->skipsText() + "\n"));
    QVERIFY(status->text().contains(status->skipsText()) && status->text().contains(status->warningsText()));

    // Followed again (a new run, as far as the window knows), its read-out starts clean: the warning once.
    QVERIFY(rc->attach({}, "tokamak", QString::fromStdString(f.path)));
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), test::kPatienceMs);
    QCOMPARE(status->findChild<QLabel*>("runWarnings")->toolTip(), QString::fromStdString(warning));
    QVERIFY2(status->skipsText().contains("1 step skipped"), qPrintable(status->text()));
  }

  // Loss spikes from the journal: each a mark on the loss plot and a note in the read-out; a rollback takes back
  // the points drawn after its checkpoint, and the steps trained again are drawn once.
  void spikesAreMarkedAndARollbackRedrawsItsSteps() {
    using nlohmann::json;
    const std::string uid = new_run_uid();
    const RunFolder f{run_folder_path("journal-spikes", uid)};
    create_run_folder(f, {uid, "journal-spikes", "", f.path, 1.0});
    Config c = tinyRun("default", 6, "journal-spikes");
    std::vector<json> events = {{{"event", "start"},
                                 {"run_uid", uid},
                                 {"name", "journal-spikes"},
                                 {"steps", 6},
                                 {"start_step", 0},
                                 {"device", "cpu"},
                                 {"dataset", "default"},
                                 {"config", json::parse(config_to_json(c, -1))}}};
    const auto step = [](int s, double loss) {
      return json{{"event", "step"}, {"step", s}, {"tokens", 64 * s}, {"wall_s", 0.1 * s}, {"loss", loss}};
    };
    for (int s = 1; s <= 5; ++s) events.push_back(step(s, 20.0 + s));  // 4 and 5 are undone below
    events.push_back({{"event", "spike"}, {"step", 5}, {"tokens", 320}, {"wall_s", 0.5}, {"signal", "loss"},
                      {"value", 25.0}, {"median", 9.0}, {"limit", 12.0}, {"action", "rolled back"}, {"to_step", 3},
                      {"data_skipped", 2}, {"total", 1}});
    for (int s = 4; s <= 6; ++s) events.push_back(step(s, 10.0 - 0.1 * s));
    events.push_back({{"event", "spike"}, {"step", 6}, {"tokens", 384}, {"wall_s", 0.6}, {"signal", "grad_norm"},
                      {"value", 40.0}, {"median", 1.0}, {"limit", 15.0}, {"action", "warned"}, {"total", 2}});
    events.push_back({{"event", "end"}, {"status", "finished"}, {"step", 6}, {"tokens", 384}, {"wall_s", 0.6}});
    std::string journal;
    for (const json& e : events) journal += e.dump() + "\n";
    write_file_atomically(f.journal(), journal);
    write_exit_file(f, "finished", 0, "");

    MainWindow w;
    w.show();
    RunController* rc = w.runController();
    QVERIFY(rc->attach({}, "tokamak", QString::fromStdString(f.path)));
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), test::kPatienceMs);
    QCOMPARE(w.livePlots()->trainPoints(), 6);
    QCOMPARE(w.livePlots()->spikeMarks(), 2);
    const QString readout = w.livePlots()->lossPlot()->readoutAt(5);
    QVERIFY2(readout.contains("train 9.5") && !readout.contains("train 25"), qPrintable(readout));  // step 5 as trained again
    RunStatus* status = w.runStatus();
    QVERIFY2(status->spikesText() == "2 loss spikes (step 6: warned)", qPrintable(status->text()));
    QVERIFY2(status->findChild<QLabel*>("runSpikes")->toolTip().contains("gradient norm 40 against a median of 1"),
             qPrintable(status->findChild<QLabel*>("runSpikes")->toolTip()));
  }

  void closedStudioKeepsTrainingAndThePickerChoosesAmongLiveRuns() {
    auto w = std::make_unique<MainWindow>();
    RunController* rc = w->runController();
    w->setupPanel()->setConfig(tinyRun("default", 100000, "journal-long"));
    w->startRun();
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step >= 3 && w->livePlots()->trainPoints() >= 3, 120000);
    const QString longUid = rc->runUid();
    const qint64 longPid = rc->processId();
    // Pause reaches it through its run folder.
    w->pauseAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(read_run_state(folderOf(longUid)).state == "paused", test::kPatienceMs);
    w->resumeAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(read_run_state(folderOf(longUid)).state == "running", test::kPatienceMs);
    // Sample: the run writes one at its next step.
    const int samplesBefore = w->samplesPanel()->sampleCount();
    QVERIFY(w->sampleAction()->isEnabled());
    w->sampleAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(w->samplesPanel()->sampleCount() > samplesBefore, 30000);

    // Closed with "Keep training": only the reader ends.
    w->setCloseQuestion([] { return int(MainWindow::CloseKeepTraining); });
    w->close();
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), test::kPatienceMs);
    QVERIFY(!rc->hasEnded());
    w.reset();
    QVERIFY(run_process_alive(folderOf(longUid)));

    // A second run, started from a terminal: both are live now.
    const std::string config = env_->path("short.json");
    write_file_atomically(config, config_to_json(tinyRun(data_, 100000, "journal-other")));
    const test::CliResult started =
        test::run_tokamak({"train", "--detach", "--json", "--config", QString::fromStdString(config)}, {}, 60000);
    QCOMPARE(started.code, 0);
    const QString shortUid =
        QString::fromStdString(nlohmann::json::parse(started.out.toStdString())["run_uid"].get<std::string>());

    // The next studio follows the newest and offers both.
    w = std::make_unique<MainWindow>();
    rc = w->runController();
    QCOMPARE(w->liveRuns()->runs().size(), 2);
    QCOMPARE(w->liveRunPicker()->count(), 2);
    QCOMPARE(rc->runUid(), shortUid);
    QTRY_VERIFY_WITH_TIMEOUT(rc->lastStep().step > 0, 60000);
    // Picked: the long run; the short one trains on unwatched and records itself.
    int longIndex = -1;
    for (int i = 0; i < w->liveRuns()->runs().size(); ++i)
      if (w->liveRuns()->runs()[i].uid == longUid) longIndex = i;
    QVERIFY(longIndex >= 0);
    w->liveRunPicker()->setCurrentIndex(longIndex);
    Q_EMIT w->liveRunPicker()->activated(longIndex);
    QTRY_VERIFY_WITH_TIMEOUT(rc->isActive() && rc->runUid() == longUid && rc->lastStep().step > 10, 60000);
    QCOMPARE(rc->processId(), longPid);
    QCOMPARE(rc->runStart().run_uid, longUid.toStdString());
    QVERIFY(w->pauseAction()->isEnabled());  // its config came back from its folder

    // Stop reaches it; the other one, unwatched all along since the pick, is stopped from a terminal.
    w->stopAction()->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!rc->isActive(), 60000);
    QCOMPARE(QString::fromStdString(rc->lastEnd().status), QString("stopped"));
    QVERIFY(run_process_alive(folderOf(shortUid)));
    // A sample asked from a terminal first, so its journal has one however few steps it has made (a fast
    // machine may stop it before its first sample.every).
    QCOMPARE(test::run_tokamak({"runs", "control", shortUid, "sample"}, {}, 60000).code, 0);
    const auto journalHasSample = [&] {
      uint64_t next = 0;
      for (const JournalLine& l : read_journal(folderOf(shortUid).journal(), 0, &next, 1 << 26))
        if (l.text.find("\"event\":\"sample\"") != std::string::npos) return true;
      return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(journalHasSample(), 60000);
    QCOMPARE(test::run_tokamak({"runs", "control", shortUid, "stop"}, {}, 60000).code, 0);
    QTRY_VERIFY_WITH_TIMEOUT(!run_process_alive(folderOf(shortUid)), 60000);
    storeEqualsJournal(longUid, "stopped");
    storeEqualsJournal(shortUid, "stopped");
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (qEnvironmentVariableIsSet("TOKAMAK_TEST_STUDIO_CHILD")) return studioChild();
  TestStudioJournal t;
  return QTest::qExec(&t, argc, argv);
}

#include "test_studio_journal.moc"
