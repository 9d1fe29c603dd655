// The studio end to end: the real MainWindow (offscreen) configures a tiny nano run, starts it in a detached
// tokamak-engine process followed through its journal, watches the plots and samples fill, pauses and resumes, stops
// (checkpoint written), finds the run in the runs page, samples from the checkpoint (another child), resumes the
// stopped run; a SIGKILLed run leaves the window up and the run crashed; a 2-rank Gloo run starts from the GPUs box;
// bad setups list their problems and keep Start off; a failed run says why; closing during a run asks and stops cleanly
// without blocking; setups, ladders and settings persist.
#include <QScopeGuard>
#include <QToolButton>
#include <QtTest>
#include <QStandardItemModel>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <csignal>
#include <unistd.h>

#include "engine/base/config/config.h"
#include "engine/base/store/run_store.h"
#include "engine/base/store/sqlite_db.h"
#include "engine/base/config/hf_config.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"
#include "tests/support/test_support.h"
#include "ui/common/child_process.h"
#include "ui/window/main_window.h"
#include "ui/plots/live_plots.h"
#include "ui/plots/metric_plot.h"
#include "ui/queue/queue_dock.h"
#include "ui/queue/queue_model.h"
#include "ui/common/programs.h"
#include "ui/live/run_controller.h"
#include "ui/history/runs_panel.h"
#include "ui/samples/samples_panel.h"
#include "ui/setup/dataset_box.h"
#include "engine/base/machine/precision_here.h"
#include "engine/base/plan/memory_estimate.h"
#include "ui/device/batch_finder.h"
#include "ui/setup/key_bindings.h"
#include "ui/setup/model_box.h"
#include "ui/setup/setup_files.h"
#include "ui/setup/setup_panel.h"
#include "ui/setup/switches_box.h"
#include "ui/status/run_status.h"

using namespace tokamak;
using namespace tokamak::ui;
using State = RunController::State;

namespace {

Config tinyRun(const std::string& data, int64_t steps, const std::string& name) {
  Config c;
  apply_overrides(
      c, test::tiny_run_overrides({"model.preset=nano", "train.batch_size=2", "train.steps=" + std::to_string(steps),
                                   "threads=1", "train.log_every=1", "eval.every=10", "eval.batches=2",
                                   "sample.every=10", "sample.tokens=8", "schedule.warmup_steps=2",
                                   "speed.precision=fp32", "data.path=" + data, "name=" + name}));
  return c;
}

QStringList problemLines(MainWindow& w) {
  QStringList lines;
  auto* list = w.setupPanel()->findChild<QListWidget*>("problems");
  for (int i = 0; list && i < list->count(); ++i) lines << list->item(i)->text();
  return lines;
}

// The command line of a live process, arguments joined by spaces ("" when it is gone).
QString commandLineOf(qint64 pid) {
  QFile f(QString("/proc/%1/cmdline").arg(pid));
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll().replace('\0', ' ')).trimmed();
}

// The live processes whose parent is pid.
QList<qint64> childrenOf(qint64 pid) {
  QList<qint64> out;
  for (const QString& entry : QDir("/proc").entryList(QDir::Dirs)) {
    bool number = false;
    const qint64 child = entry.toLongLong(&number);
    if (!number) continue;
    QFile f("/proc/" + entry + "/stat");
    if (!f.open(QIODevice::ReadOnly)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
    const QByteArray stat = f.readAll();
    const QList<QByteArray> rest = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
    if (rest.size() > 1 && rest[1].toLongLong() == pid) out << child;
  }
  return out;
}

// The id and status of the newest run called name in the default store, read with a plain connection: a
// RunStore would mark dead runs crashed itself on open, and the tests must see who else did.
std::pair<int64_t, QString> storedRun(const std::string& name) {
  try {
    Db db(default_db_path(), Db::Mode::existing);
    Stmt s(db, "SELECT id, status FROM runs WHERE name = ? ORDER BY id DESC LIMIT 1");
    s.bind(1, name);
    if (s.step()) return {s.int64(0), QString::fromStdString(s.text(1))};
  } catch (const std::exception&) {
    // not written yet
  }
  return {0, {}};
}

QString storedStatus(const std::string& name) { return storedRun(name).second; }

bool tableHas(RunsPanel* panel, const QString& text) {
  auto* table = panel->findChild<QTableView*>();
  if (!table || !table->model()) return false;
  QAbstractItemModel* m = table->model();
  for (int r = 0; r < m->rowCount(); ++r)
    for (int c = 0; c < m->columnCount(); ++c)
      if (m->index(r, c).data().toString().contains(text)) return true;
  return false;
}

// Whether the runs table has a row showing both texts (a run's name and, say, its status).
bool rowHas(RunsPanel* panel, const QString& first, const QString& second) {
  auto* table = panel->findChild<QTableView*>();
  if (!table || !table->model()) return false;
  QAbstractItemModel* m = table->model();
  for (int r = 0; r < m->rowCount(); ++r) {
    QString row;
    for (int c = 0; c < m->columnCount(); ++c) row += m->index(r, c).data().toString() + '\t';
    if (row.contains(first) && row.contains(second)) return true;
  }
  return false;
}

}  // namespace

class TestStudio : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void setupShowsEstimateAndAvailability();
  void speedrunSwitchesAndTarget();
  void everyKeyWidgetShowsItsKeysDescription();
  void nextSpeedrunSwitchesBehindMore();
  void badInputs_data();
  void badInputs();
  void countsTokensOffTheGuiThread();
  void childProcessSaysWhyInOneLine();
  void runLifecycle();
  void failedRunShowsWhy();
  void killedChildLeavesStudioUp();
  void twoRankRunFromGpusBox();
  void runsPageNoticesDeadRunAndRefusesLiveOnes();
  void closingDuringRunAsksThenStops();
  void closingDuringLongSampleAsksThenEndsIt();
  void setupFilesAndLadders();
  void settingsAreRemembered();
  void runsPageLoadsRerunAndResume();
  void startsFromHuggingFaceWeights();
  void repeatsWithSeedsOneAfterAnother();
  void findsLargestBatchInAChild();

 private:
  std::unique_ptr<test::ScratchEnv> env_;
  std::string data_;
};

void TestStudio::initTestCase() {
  env_ = std::make_unique<test::ScratchEnv>();
  QVERIFY2(env_->ok(), "assets missing: run scripts/setup.sh");  // always there after set-up: fail, never skip
  data_ = env_->corpus_excerpt(40000);
}

void TestStudio::setupShowsEstimateAndAvailability() {
  MainWindow w;
  w.setupPanel()->setConfig(tinyRun(data_, 50, "estimate"));
  auto* params = w.setupPanel()->findChild<QLabel*>("paramCount");
  auto* memory = w.setupPanel()->findChild<QLabel*>("memoryEstimate");
  QVERIFY(params && memory);
  QVERIFY2(params->text().contains("M"), qPrintable(params->text()));  // 1.7M at width 32 (the embedding)
  QVERIFY2(memory->text().contains("per process"), qPrintable(memory->text()));
  QVERIFY(memory->toolTip().contains("Korthikanti"));
  // On this CPU-only machine the CUDA-only switches are off, each with the engine's reason.
  const QString why = w.setupPanel()->switchesBox()->unavailableText();
  QVERIFY2(why.contains("speed.precision=tf32") && why.contains("needs a CUDA device"), qPrintable(why));
  auto* pin = w.setupPanel()->findChild<QCheckBox*>("speed.pin_memory");
  QVERIFY(pin && !pin->isEnabled() && pin->toolTip().contains("Unavailable"));
  auto* fused = w.setupPanel()->findChild<QCheckBox*>("speed.fused_adamw");
  QVERIFY(fused && fused->isEnabled() && fused->toolTip().contains("multi-tensor kernel"));
  auto* find = w.setupPanel()->findChild<QPushButton*>("findLargestBatch");
  QVERIFY(find && !find->isEnabled() && find->toolTip().contains("CUDA"));
  QVERIFY(w.startAction()->isEnabled());
  QVERIFY(!w.pauseAction()->isEnabled() && !w.stopAction()->isEnabled() && !w.resumeAction()->isEnabled());
  // ZeRO-1 over two ranks: the box sets dist.zero and the estimate per process drops by half the AdamW state.
  Config two = tinyRun(data_, 50, "estimate");
  two.dist.gpus = 2;
  w.setupPanel()->setConfig(two);
  QTRY_VERIFY_WITH_TIMEOUT(memory->property("bytes").toLongLong() > 0, test::kPatienceMs);
  const qint64 unsharded = memory->property("bytes").toLongLong();
  auto* zero = w.setupPanel()->findChild<QCheckBox*>("dist.zero");
  QVERIFY(zero && zero->isEnabled() && !zero->isChecked());
  zero->setChecked(true);
  QCOMPARE(w.setupPanel()->config().dist.zero, int64_t{1});
  QTRY_VERIFY_WITH_TIMEOUT(memory->property("bytes").toLongLong() < unsharded, test::kPatienceMs);
  QVERIFY2(memory->toolTip().contains("ZeRO-1"), qPrintable(memory->toolTip()));
  const Config shown = w.setupPanel()->config();
  const MemoryEstimate m = estimate_memory(shown, precision_here(shown.speed.precision, shown.device));
  QCOMPARE(unsharded - memory->property("bytes").toLongLong(), qint64(m.optimizer_saved));
}

// The speedrun's switches are keys of the setup like any other, each with its tooltip, greyed out
// with the engine's reason where they cannot run; the target loss sits beside Steps.
void TestStudio::speedrunSwitchesAndTarget() {
  MainWindow w;
  w.setupPanel()->setConfig(tinyRun(data_, 50, "speedrun"));
  auto* optimizer = w.setupPanel()->findChild<QComboBox*>("optimizer.name");
  auto* position = w.setupPanel()->findChild<QComboBox*>("model.position");
  auto* qk = w.setupPanel()->findChild<QCheckBox*>("model.qk_norm");
  auto* target = w.setupPanel()->findChild<QLineEdit*>("eval.target_val_loss");
  auto* stop = w.setupPanel()->findChild<QCheckBox*>("eval.stop_at_target");
  QVERIFY(optimizer && position && qk && target && stop);
  QVERIFY(optimizer->itemData(1, Qt::ToolTipRole).toString().contains("Newton–Schulz"));
  QVERIFY(qk->toolTip().contains("zero-init projections"));
  optimizer->setCurrentIndex(optimizer->findData("muon"));
  position->setCurrentIndex(position->findData("rope"));
  qk->setChecked(true);
  target->setText("6.5");
  stop->setChecked(true);
  const Config c = w.setupPanel()->config();
  QCOMPARE(QString::fromStdString(name_of(c.optimizer.name)), QString("muon"));
  QCOMPARE(QString::fromStdString(name_of(c.model.position)), QString("rope"));
  QVERIFY(c.model.qk_norm && c.eval.stop_at_target);
  QCOMPARE(c.eval.target_val_loss, 6.5);
  QVERIFY(w.startAction()->isEnabled());
  // With ZeRO-1 on, Muon is the problem: the list names it and, once back on AdamW, the muon row is greyed out.
  Config zero = c;
  zero.dist.gpus = 2, zero.dist.zero = 1;
  w.setupPanel()->setConfig(zero);
  auto* list = w.setupPanel()->findChild<QListWidget*>("problems");
  QTRY_VERIFY_WITH_TIMEOUT(list->count() > 0, test::kPatienceMs);
  QVERIFY2(list->item(0)->text().contains("set dist.zero=0"), qPrintable(list->item(0)->text()));
  optimizer->setCurrentIndex(optimizer->findData("adamw"));
  QTRY_VERIFY2(list->count() == 0 || !list->item(0)->text().contains("muon"),
               qPrintable(list->count() ? list->item(0)->text() : QString()));
  auto* model = qobject_cast<QStandardItemModel*>(optimizer->model());
  QVERIFY(!model->item(optimizer->findData("muon"))->isEnabled());
  QVERIFY(optimizer->itemData(optimizer->findData("muon"), Qt::ToolTipRole).toString().contains("Unavailable"));
}

// One description per key: every setup widget bound to a config key shows the registry's help for that key (the
// text `tokamak config --keys` prints) and the key itself as its tooltip.
void TestStudio::everyKeyWidgetShowsItsKeysDescription() {
  MainWindow w;
  int bound = 0;
  for (const KeyDoc& k : config_keys()) {
    auto* widget = w.setupPanel()->findChild<QWidget*>(QString::fromStdString(k.key));
    if (!widget) continue;
    ++bound;
    const QString tip = widget->toolTip();
    QVERIFY2(tip.startsWith(QString::fromStdString(k.help)), qPrintable(QString::fromStdString(k.key) + ": " + tip));
    QVERIFY2(tip.contains("(" + QString::fromStdString(k.key) + ")"), qPrintable(tip));
  }
  QVERIFY2(bound >= 35, qPrintable(QString::number(bound)));  // the setup binds most keys, not a handful
}

// The speedrun's next switches sit under "More switches" (closed on a first start, so the speed-up switches stay in
// sight at 1366×768): each is a key of the setup with the engine's help as its tooltip, a setup that uses one
// opens it, and what it does not combine with is listed with the engine's reason.
void TestStudio::nextSpeedrunSwitchesBehindMore() {
  MainWindow w;
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.setupPanel()->setConfig(tinyRun(data_, 50, "next"));
  auto* more = w.setupPanel()->findChild<QToolButton*>("speedrunMore");
  auto* extra = w.setupPanel()->findChild<QWidget*>("speedrunExtra");
  auto* headLr = w.setupPanel()->findChild<QLineEdit*>("optimizer.head_lr");
  auto* valueEmb = w.setupPanel()->findChild<QLineEdit*>("model.value_embeddings");
  auto* seqWarmup = w.setupPanel()->findChild<QLineEdit*>("train.seq_warmup");
  auto* muonNs = w.setupPanel()->findChild<QComboBox*>("optimizer.muon_ns");
  auto* unet = w.setupPanel()->findChild<QCheckBox*>("model.unet_skips");
  QVERIFY(more && extra && headLr && valueEmb && seqWarmup && muonNs && unet);
  QVERIFY(!extra->isVisible() && !more->isChecked());
  QVERIFY(unet->isVisible());  // a checkbox beside QK-norm, not behind More
  QVERIFY2(valueEmb->toolTip().contains("model.value_embeddings"), qPrintable(valueEmb->toolTip()));
  QVERIFY(muonNs->findData("polar_express") >= 0);
  more->click();
  QVERIFY(extra->isVisible());
  valueEmb->setText("1");
  seqWarmup->setText("20");
  unet->setChecked(true);
  muonNs->setCurrentIndex(muonNs->findData("polar_express"));
  Config c = w.setupPanel()->config();
  QCOMPARE(c.model.value_embeddings, int64_t{1});
  QCOMPARE(c.train.seq_warmup, int64_t{20});
  QVERIFY(c.model.unet_skips);
  QCOMPARE(QString::fromStdString(name_of(c.optimizer.muon_ns)), QString("polar_express"));
  // A head lr with the head tied to the embedding: listed with the engine's fix.
  headLr->setText("0.01");
  auto* list = w.setupPanel()->findChild<QListWidget*>("problems");
  auto listed = [list] {
    QStringList all;
    for (int i = 0; i < list->count(); ++i) all << list->item(i)->text();
    return all.join('\n');
  };
  QTRY_VERIFY2_WITH_TIMEOUT(listed().contains("model.tie_weights=false"), qPrintable(listed()), test::kPatienceMs);
  // A new window given a setup that uses one of them opens "More" by itself.
  MainWindow again;
  again.show();
  QVERIFY(QTest::qWaitForWindowExposed(&again));
  Config uses = tinyRun(data_, 50, "uses");
  uses.train.batch_warmup = 10;
  again.setupPanel()->setConfig(uses);
  QTRY_VERIFY_WITH_TIMEOUT(again.setupPanel()->findChild<QWidget*>("speedrunExtra")->isVisible(), test::kPatienceMs);
  QCOMPARE(again.setupPanel()->findChild<QLineEdit*>("train.batch_warmup")->text(), QString("10"));
}

void TestStudio::badInputs_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("value");
  QTest::addColumn<QString>("problem");  // a piece of the line the window must list
  QTest::newRow("missing dataset") << "data.path"
                                   << "/no/such/corpus.txt"
                                   << "does not exist";
  QTest::newRow("heads do not divide width") << "model.n_head"
                                             << "3"
                                             << "model.n_head (3) must divide";
  QTest::newRow("learning rate not a number") << "optimizer.lr"
                                              << "fast"
                                              << "optimizer.lr";
  QTest::newRow("CUDA-only precision on CPU") << "speed.precision"
                                              << "tf32"
                                              << "needs a CUDA device";
}

void TestStudio::badInputs() {
  QFETCH(QString, key);
  QFETCH(QString, value);
  QFETCH(QString, problem);
  MainWindow w;
  w.setupPanel()->setConfig(tinyRun(data_, 50, "bad"));
  QVERIFY(w.setupPanel()->canStart());
  // Change the widget as a user would, so the panel reacts to its own signals.
  QWidget* widget = w.setupPanel()->findChild<QWidget*>(key);
  QVERIFY2(widget, qPrintable(key));
  if (key == "data.path") w.setupPanel()->findChild<QComboBox*>("datasetKind")->setCurrentIndex(1);
  if (auto* spin = qobject_cast<QSpinBox*>(widget)) spin->setValue(value.toInt());
  if (auto* edit = qobject_cast<QLineEdit*>(widget)) edit->setText(value);
  if (auto* combo = qobject_cast<QComboBox*>(widget)) combo->setCurrentIndex(combo->findData(value));
  QTRY_VERIFY2(problemLines(w).join('\n').contains(problem), qPrintable(problemLines(w).join('\n')));
  QVERIFY(!w.setupPanel()->canStart());
  QVERIFY(!w.startAction()->isEnabled());
  w.startRun();  // even when asked directly, nothing starts
  QCOMPARE(w.runController()->state(), State::Idle);
  // Putting the setup right enables Start again.
  w.setupPanel()->setConfig(tinyRun(data_, 50, "bad"));
  QTRY_VERIFY_WITH_TIMEOUT(w.startAction()->isEnabled(), test::kPatienceMs);
}

void TestStudio::countsTokensOffTheGuiThread() {
  MainWindow w;
  w.setupPanel()->setConfig(tinyRun(data_, 50, "count"));
  DatasetBox* box = w.setupPanel()->datasetBox();
  box->countTokens();
  QVERIFY(box->isCounting());
  QTRY_VERIFY_WITH_TIMEOUT(!box->isCounting(), 60000);
  QVERIFY2(box->tokenSummary().contains("tokens"), qPrintable(box->tokenSummary()));
  // Cancelling a count ends it without a result or an error dialog (default corpus: big enough to cancel).
  w.setupPanel()->setConfig(Config{});
  QVERIFY(box->tokenSummary().isEmpty());
  box->countTokens();
  box->cancelCount();
  QTRY_VERIFY_WITH_TIMEOUT(!box->isCounting(), 60000);
  const QString shown = box->findChild<QLabel*>("tokenCount")->text();
  QVERIFY2(shown.contains("cancelled") || shown.contains("tokens"), qPrintable(shown));
}

// ChildProcess, every program the studio runs as its child: stdout as lines and JSON objects (progress events,
// the last other object as the result), and a failure as one line: the child's own "tokamak: " line, its exit
// code, its crash, cancel, or a program that is not there.
void TestStudio::childProcessSaysWhyInOneLine() {
  ChildProcess child;
  child.setKeepOutput(true);
  QSignalSpy finished(&child, &ChildProcess::finished), progress(&child, &ChildProcess::progress),
      lines(&child, &ChildProcess::outputLine);
  const auto run = [&](const QString& script) {
    finished.clear();
    QVERIFY(child.start("/bin/sh", {"-c", script}));
    QVERIFY(!child.start("/bin/sh", {"-c", "true"}));  // one child at a time
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, test::kPatienceMs);
  };
  run(R"(echo '{"event":"progress","what":"x","done":1,"total":2}'; echo '{"id":7}'; printf 'no newline')");
  QCOMPARE(finished[0][0].toString(), QString());
  QCOMPARE(child.error(), QString());
  QCOMPARE(progress.size(), 1);
  QCOMPARE(child.result().value("id").toInt(), 7);
  QCOMPARE(lines.size(), 3);
  QVERIFY(child.output().endsWith("no newline"));

  run("echo 'tokamak: the disk is full (hint: free space)' >&2; echo later >&2; exit 1");
  QCOMPARE(child.error(), QString("the disk is full (hint: free space)"));
  QCOMPARE(finished[0][0].toString(), child.error());
  run("exit 3");
  QCOMPARE(child.exitCode(), 3);
  QVERIFY2(child.error().contains("exit code 3"), qPrintable(child.error()));
  run("kill -9 $$");
  QVERIFY(child.crashed());
  QCOMPARE(child.error(), QString("the sh process crashed"));

  finished.clear();
  QVERIFY(child.start("/bin/sh", {"-c", "exec sleep 30"}));
  QTRY_VERIFY(child.processId() > 0);
  child.cancel();
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, test::kPatienceMs);
  QCOMPARE(child.error(), QString("cancelled"));

  run("true");  // (resets the result)
  finished.clear();
  QVERIFY(child.start("/no/such/program", {}));
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, test::kPatienceMs);
  QVERIFY2(child.error().startsWith("could not start /no/such/program"), qPrintable(child.error()));
  finished.clear();
  QVERIFY(child.start(QString(), {}));  // not found beside the studio: the engine's missing line
  QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, test::kPatienceMs);
  QVERIFY2(child.error().contains("was not found"), qPrintable(child.error()));
}

void TestStudio::runLifecycle() {
  MainWindow w;
  w.setCloseQuestion([] { return true; });
  w.show();
  w.setupPanel()->setConfig(tinyRun(data_, 100000, "studio-lifecycle"));
  QVERIFY(w.startAction()->isEnabled());
  w.startAction()->trigger();
  RunController* run = w.runController();
  QVERIFY(run->isActive());
  QVERIFY(!w.startAction()->isEnabled());
  // The run trains in an engine process of its own, in a session of its own (it outlives the studio), started
  // by the studio itself as the queue worker starts a run (engine/base/run/run_launch.h): no starter program in
  // between, so its pid is known and the engine exec'd as Start returns, and it is the studio's own child until
  // it ends. The studio's other child is its reader, `tokamak runs follow FOLDER --control`, with the controls.
  const qint64 app = QCoreApplication::applicationPid();
  QVERIFY(run->processId() > 0 && run->processId() != app);
  QVERIFY2(commandLineOf(run->processId()).contains("tokamak-engine train --config"),
           qPrintable(commandLineOf(run->processId())));
  QVERIFY(childrenOf(app).contains(run->processId()));
  QCOMPARE(qint64(::getsid(static_cast<pid_t>(run->processId()))), run->processId());
  for (qint64 child : childrenOf(app))
    QVERIFY2(!commandLineOf(child).contains("--detach"), qPrintable(commandLineOf(child)));
  QTRY_VERIFY_WITH_TIMEOUT(run->readerPid() > 0, test::kPatienceMs);
  QTRY_VERIFY2(commandLineOf(run->readerPid()).contains("runs follow ") &&
                   commandLineOf(run->readerPid()).endsWith(" --control"),
               qPrintable(commandLineOf(run->readerPid())));

  // Plots receive points: loss, tok/s, lr, grad norm on every report, memory (peak RSS on a CPU) too, and MFU
  // against the CPU's measured GEMM peak (engine/torch/device/cpu_peak.h).
  QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->trainPoints() >= 12, 90000);
  for (MetricPlot* p : w.livePlots()->plots()) QVERIFY2(p->shownPointCount() > 0, qPrintable(p->title()));
  QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->valPoints() > 0, 30000);
  QTRY_VERIFY_WITH_TIMEOUT(w.samplesPanel()->sampleCount() > 0, 30000);
  QVERIFY(w.samplesPanel()->text().contains("step 10"));
  QVERIFY(w.runStatus()->text().contains("tok/s"));
  QTRY_VERIFY_WITH_TIMEOUT(tableHas(w.runsPanel(), "studio-lifecycle"), test::kPatienceMs);  // recorded while it trains

  // Pause: steps stop advancing; resume: they advance again.
  w.pauseAction()->trigger();
  QCOMPARE(run->state(), State::Paused);
  QVERIFY(w.resumeAction()->isEnabled() && !w.pauseAction()->isEnabled());
  QTest::qWait(800);  // the step in flight finishes and reports
  const int64_t pausedAt = run->lastStep().step;
  QTest::qWait(1200);
  QCOMPARE(run->lastStep().step, pausedAt);
  QCOMPARE(w.runStatus()->stateText(), QString("paused"));
  w.resumeAction()->trigger();
  QCOMPARE(run->state(), State::Running);
  QTRY_VERIFY_WITH_TIMEOUT(run->lastStep().step > pausedAt, 30000);

  // Stop: the run ends as stopped with a checkpoint, which enables "sample now" and resuming.
  w.stopAction()->trigger();
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), 60000);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("stopped"));
  QVERIFY2(QFile::exists(run->lastCheckpoint()), qPrintable(run->lastCheckpoint()));
  QCOMPARE(w.runStatus()->stateText(), QString("stopped"));
  QVERIFY(w.resumeAction()->isEnabled() && w.startAction()->isEnabled());
  QVERIFY(w.failureText().isEmpty());
  w.showRunsPage();
  QTRY_VERIFY_WITH_TIMEOUT(tableHas(w.runsPanel(), "studio-lifecycle"), test::kPatienceMs);
  QVERIFY(tableHas(w.runsPanel(), "stopped"));

  auto* sampleNow = w.samplesPanel()->findChild<QPushButton*>("sampleNow");
  QVERIFY(sampleNow->isEnabled());
  const int before = w.samplesPanel()->sampleCount();
  w.samplesPanel()->findChild<QLineEdit*>("samplePrompt")->setText("A hacker is");
  sampleNow->click();
  QTRY_VERIFY_WITH_TIMEOUT(w.samplesPanel()->sampleCount() == before + 1, 60000);
  QVERIFY2(w.samplesPanel()->text().contains("A hacker is"), qPrintable(w.samplesPanel()->text().right(300)));
  QVERIFY(!w.samplesPanel()->text().contains("failed"));

  // A stopped run resumes from its checkpoint, on the same curves.
  const int64_t stoppedAt = run->lastEnd().step;
  const int pointsBefore = w.livePlots()->trainPoints();
  w.resumeAction()->trigger();
  QTRY_VERIFY_WITH_TIMEOUT(run->lastStep().step > stoppedAt, 60000);
  QCOMPARE(run->runStart().start_step, stoppedAt);
  QVERIFY(w.livePlots()->trainPoints() > pointsBefore);
  w.stopAction()->trigger();
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), 60000);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("stopped"));
}

void TestStudio::failedRunShowsWhy() {
  // A token shard with a bad header: the engine refuses it, and the window says why.
  const QString bad = QString::fromStdString(env_->path("broken.bin"));
  QFile f(bad);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(QByteArray(4096, 'x'));
  f.close();
  MainWindow w;
  w.setupPanel()->setConfig(tinyRun(bad.toStdString(), 20, "studio-broken"));
  QVERIFY(w.setupPanel()->canStart());
  w.startRun();
  QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->isActive(), 60000);
  QCOMPARE(QString::fromStdString(w.runController()->lastEnd().status), QString("failed"));
  QVERIFY2(w.failureText().contains("broken.bin"), qPrintable(w.failureText()));
  QCOMPARE(w.runStatus()->stateText(), QString("failed"));
  QVERIFY(w.startAction()->isEnabled());  // the setup can be fixed and started again
}

void TestStudio::killedChildLeavesStudioUp() {
  MainWindow w;
  w.setCloseQuestion([] { return true; });
  w.show();
  w.setupPanel()->setConfig(tinyRun(data_, 100000, "studio-killed"));
  w.startRun();
  RunController* run = w.runController();
  QTRY_VERIFY_WITH_TIMEOUT(run->lastStep().step >= 3, 90000);
  QTRY_COMPARE_WITH_TIMEOUT(storedStatus("studio-killed"), QString("running"), test::kPatienceMs);
  const qint64 pid = run->processId();
  QVERIFY(pid > 0);
  QElapsedTimer clock;
  clock.start();
  QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
  // The window stays up and says at once what happened; the store marks the run crashed within seconds.
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), test::kPatienceMs);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("crashed"));
  // Nobody's child, its signal is unknown: its reader reports the run crashed, with its last output line.
  QVERIFY2(w.failureText().contains("crashed (it ended without an end event)"), qPrintable(w.failureText()));
  QCOMPARE(w.runStatus()->stateText(), QString("crashed"));
  QVERIFY(w.isVisible());
  QTRY_COMPARE_WITH_TIMEOUT(storedStatus("studio-killed"), QString("crashed"), test::kPatienceMs);
  qInfo("crash noticed and stored in %lld ms", clock.elapsed());
  QVERIFY(w.startAction()->isEnabled());
  // The studio trains again after the crash.
  w.setupPanel()->setConfig(tinyRun(data_, 3, "studio-after-crash"));
  w.startRun();
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), 90000);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("finished"));
}

void TestStudio::twoRankRunFromGpusBox() {
  MainWindow w;
  w.setCloseQuestion([] { return true; });
  w.show();
  w.setupPanel()->setConfig(tinyRun(data_, 100000, "studio-ranks"));
  // The GPUs box, as a user sets it; on this CPU-only machine the ranks are Gloo CPU processes.
  auto* gpus = w.setupPanel()->findChild<QSpinBox*>("dist.gpus");
  QVERIFY(gpus);
  gpus->setValue(2);
  QTRY_COMPARE_WITH_TIMEOUT(w.setupPanel()->config().dist.gpus, int64_t(2), test::kPatienceMs);
  QVERIFY2(w.setupPanel()->canStart(), qPrintable(problemLines(w).join('\n')));
  w.startAction()->trigger();
  RunController* run = w.runController();
  QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->trainPoints() >= 3, 120000);
  QCOMPARE(run->runStart().world_size, 2);
  // The child is the launcher; the two ranks are its own children.
  QTRY_COMPARE_WITH_TIMEOUT(childrenOf(run->processId()).size(), 2, test::kPatienceMs);
  const QList<qint64> ranks = childrenOf(run->processId());
  QVERIFY2(w.runStatus()->text().contains("2 ranks"), qPrintable(w.runStatus()->text()));
  QVERIFY(!w.pauseAction()->isEnabled());  // data-parallel runs cannot pause
  QVERIFY(w.stopAction()->isEnabled());
  w.stopAction()->trigger();
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), 90000);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("stopped"));
  for (qint64 rank : ranks) QVERIFY2(commandLineOf(rank).isEmpty(), "a rank outlived Stop");
  QVERIFY(w.failureText().isEmpty());
}

void TestStudio::runsPageNoticesDeadRunAndRefusesLiveOnes() {
  MainWindow w;
  w.show();
  w.showRunsPage();
  // A run started outside the studio (a terminal's `tokamak train`), recorded in the same store.
  const QString config = QString::fromStdString(env_->path("outside.json"));
  QFile f(config);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(QByteArray::fromStdString(config_to_json(tinyRun(data_, 100000, "studio-outside"))));
  f.close();
  QProcess outside;
  outside.start(enginePath(), {"train", "--config", config});
  QVERIFY2(outside.waitForStarted(), qPrintable(enginePath()));
  QTRY_COMPARE_WITH_TIMEOUT(storedStatus("studio-outside"), QString("running"), 90000);
  QTRY_VERIFY_WITH_TIMEOUT(tableHas(w.runsPanel(), "studio-outside"), test::kPatienceMs);
  const int64_t id = storedRun("studio-outside").first;
  QVERIFY(id > 0);
  // Delete and Resume refuse a live run (as `tokamak runs delete` does), without asking anything.
  QVERIFY(!w.runsPanel()->deleteRuns({id}));
  QVERIFY(!w.runsPanel()->resumeRun(id));
  QCOMPARE(storedStatus("studio-outside"), QString("running"));
  // Killed: the open runs page notices by itself, with no reopening of the store.
  outside.kill();
  QVERIFY(outside.waitForFinished(5000));
  QTRY_VERIFY_WITH_TIMEOUT(rowHas(w.runsPanel(), "studio-outside", "crashed"), test::kPatienceMs);
  QCOMPARE(storedStatus("studio-outside"), QString("crashed"));
}

void TestStudio::closingDuringRunAsksThenStops() {
  MainWindow w;
  w.show();
  int asked = 0;
  bool answer = false;
  w.setCloseQuestion([&] { return ++asked, answer; });
  w.setupPanel()->setConfig(tinyRun(data_, 100000, "studio-close"));
  w.startRun();
  QTRY_VERIFY_WITH_TIMEOUT(w.livePlots()->trainPoints() > 2, 90000);
  QVERIFY(!w.close());  // "no": the window and the run stay
  QCOMPARE(asked, 1);
  QVERIFY(w.runController()->isActive());
  answer = true;
  // "yes": the window asks the child to stop and closes once it has ended, without blocking in between.
  w.close();
  // close() returned while the run was still stopping: it asked and went back to the event loop, not waited.
  QVERIFY(w.isVisible());
  QVERIFY(w.runController()->isActive());
  QCOMPARE(asked, 2);
  QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), MainWindow::kCloseGraceMs);
  QCOMPARE(asked, 2);  // asked once per close, not again when it closes itself
  QVERIFY(!w.runController()->isActive());
  QCOMPARE(QString::fromStdString(w.runController()->lastEnd().status), QString("stopped"));
  QVERIFY(QFile::exists(w.runController()->lastCheckpoint()));
}

// A "Sample now" that takes long (a big model on a CPU; here an engine stand-in that only sleeps): closing asks,
// then ends the sampling child at once (there is nothing of it to save) and closes without blocking.
void TestStudio::closingDuringLongSampleAsksThenEndsIt() {
  QTemporaryDir dir;
  const QString pidFile = dir.filePath("sampler.pid");
  const QString engine = dir.filePath("slow-engine");
  QFile script(engine);
  QVERIFY(script.open(QIODevice::WriteOnly));
  script.write(QString("#!/bin/sh\necho $$ > '%1'\nexec sleep 600\n").arg(pidFile).toUtf8());
  script.close();
  QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
  const QByteArray before = qgetenv("TOKAMAK_ENGINE_BIN");
  qputenv("TOKAMAK_ENGINE_BIN", engine.toUtf8());
  auto restore = qScopeGuard([&] {
    if (before.isEmpty()) qunsetenv("TOKAMAK_ENGINE_BIN");
    else qputenv("TOKAMAK_ENGINE_BIN", before);
  });

  MainWindow w;
  w.show();
  int asked = 0;
  bool answer = false;
  w.setCloseQuestion([&] { return ++asked, answer; });
  w.samplesPanel()->setCheckpoint(engine, 7);  // any existing file: the stand-in does not read it
  w.samplesPanel()->sampleNow();
  QVERIFY(w.samplesPanel()->isSampling());
  QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(pidFile) && QFileInfo(pidFile).size() > 0, test::kPatienceMs);
  QFile f(pidFile);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const qint64 pid = f.readAll().trimmed().toLongLong();
  QVERIFY(pid > 0);
  // The stand-in writes its pid, then execs sleep: on a busy machine the test may read the pid first.
  QTRY_VERIFY_WITH_TIMEOUT(commandLineOf(pid).contains("sleep"), test::kPatienceMs);

  QVERIFY(!w.close());  // "no": sampling goes on
  QCOMPARE(asked, 1);
  QVERIFY(w.samplesPanel()->isSampling());
  answer = true;
  w.close();
  // close() returned before the sampler had gone (it was killed, not waited for): the window closes after.
  QVERIFY(w.isVisible());
  QVERIFY(w.samplesPanel()->isSampling());
  QTRY_VERIFY_WITH_TIMEOUT(!w.isVisible(), test::kPatienceMs);
  QCOMPARE(asked, 2);
  QVERIFY(!w.samplesPanel()->isSampling());
  QTRY_VERIFY_WITH_TIMEOUT(commandLineOf(pid).isEmpty(), test::kPatienceMs);  // the child is gone, not left behind
}

void TestStudio::setupFilesAndLadders() {
  QTemporaryDir dir;
  Config c = tinyRun(data_, 77, "saved");
  QString error;
  QVERIFY(saveSetup(dir.filePath("setup.json"), c, &error));
  Config back;
  QVERIFY2(loadSetup(dir.filePath("setup.json"), &back, &error), qPrintable(error));
  QCOMPARE(config_to_json(back), config_to_json(c));
  QVERIFY(!loadSetup(dir.filePath("missing.json"), &back, &error));
  QVERIFY(error.contains("missing.json"));

  // A ladder: nested and dotted keys in the base; cumulative rungs build on each other.
  QFile f(dir.filePath("ladder.json"));
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(R"({"name": "tiny", "base": {"model": {"preset": "nano"}, "train.steps": 12},
              "rungs": [{"name": "fp32", "set": {"speed.precision": "fp32"}},
                        {"name": "checkpointing", "set": {"speed.activation_checkpointing": true}}]})");
  f.close();
  QString name;
  QStringList rungs;
  QList<Config> configs;
  QVERIFY2(readLadder(dir.filePath("ladder.json"), &name, &rungs, &configs, &error), qPrintable(error));
  QCOMPARE(name, QString("tiny"));
  QCOMPARE(rungs, QStringList({"fp32", "checkpointing"}));
  QCOMPARE(configs[1].train.steps, int64_t(12));
  QCOMPARE(QString::fromStdString(name_of(configs[1].speed.precision)), QString("fp32"));
  QVERIFY(configs[1].speed.activation_checkpointing);
  QCOMPARE(QString::fromStdString(configs[0].name), QString("tiny/fp32"));

  // Loading a rung into the window fills the widgets.
  MainWindow w;
  w.setupPanel()->setConfig(configs[1]);
  QCOMPARE(w.setupPanel()->keys()->value("speed.activation_checkpointing"), QString("true"));
  QCOMPARE(w.setupPanel()->config().train.steps, int64_t(12));

  // The ladders shipped in experiments/ load too.
  const QString shipped = QStringLiteral(TOKAMAK_SOURCE_DIR "/resources/ladders/cpu-nano.json");
  if (QFile::exists(shipped)) {
    QVERIFY2(readLadder(shipped, &name, &rungs, &configs, &error), qPrintable(error));
    QVERIFY(rungs.size() > 1);
  }
}

void TestStudio::settingsAreRemembered() {
  {
    MainWindow w;
    w.show();
    w.setupPanel()->setConfig(tinyRun(data_, 321, "remembered"));
    QVERIFY(w.close());
  }
  MainWindow again;
  QCOMPARE(again.setupPanel()->config().train.steps, int64_t(321));
  QCOMPARE(QString::fromStdString(again.setupPanel()->config().name), QString("remembered"));
  QCOMPARE(again.setupPanel()->config().model.n_embd, int64_t(32));
}

void TestStudio::runsPageLoadsRerunAndResume() {
  MainWindow w;
  const QString json = QString::fromStdString(config_to_json(tinyRun(data_, 55, "past-run")));
  // "Re-run with changes" from the runs page: its config lands in the setup, ready to edit and start.
  Q_EMIT w.runsPanel()->rerunRequested(json);
  QCOMPARE(w.setupPanel()->config().train.steps, int64_t(55));
  QCOMPARE(QString::fromStdString(w.setupPanel()->config().name), QString("past-run"));
  QVERIFY(w.setupPanel()->config().checkpoint.resume.empty());
  // "Resume" from the runs page: the same, with checkpoint.resume set to the checkpoint.
  Q_EMIT w.runsPanel()->resumeRequested("/runs/past/step_20.pt", json);
  QCOMPARE(QString::fromStdString(w.setupPanel()->config().checkpoint.resume), QString("/runs/past/step_20.pt"));
  QVERIFY(w.setupPanel()->findChild<QLabel*>("resumeFrom")->text().contains("step_20.pt"));
  w.setupPanel()->clearResume();
  QVERIFY(w.setupPanel()->config().checkpoint.resume.empty());
}

// "Repeat with seeds" from the runs page: the copies go on this computer's queue (ui/queue: rows of the run
// store, outliving the studio), whose worker runs them one after another; the live page follows each as it
// starts, and all finish.
void TestStudio::repeatsWithSeedsOneAfterAnother() {
  MainWindow w;
  w.setCloseQuestion([] { return true; });
  w.setupPanel()->setConfig(tinyRun(data_, 3, "studio-seeds"));
  w.startRun();
  QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->isActive(), 60000);
  const auto [first, status] = storedRun("studio-seeds");
  QCOMPARE(status, QString("finished"));
  w.runsPanel()->refresh();
  QVERIFY2(w.runsPanel()->repeatWithSeeds(first, 2), qPrintable(w.runsPanel()->message()));
  QCOMPARE(w.queueDock()->model()->rowCount(), 2);  // queued in the store at once
  QTRY_VERIFY_WITH_TIMEOUT(storedStatus("studio-seeds-s" + std::to_string(1337 + 2)) == "finished", 120000);
  QCOMPARE(storedStatus("studio-seeds-s" + std::to_string(1337 + 1)), QString("finished"));
  // One after another: the second started after the first had ended.
  Db db(default_db_path(), Db::Mode::existing);
  Stmt times(db, "SELECT created, ended FROM runs WHERE name LIKE 'studio-seeds-s%' ORDER BY id");
  QVERIFY(times.step());
  const double firstEnded = times.real(1);
  QVERIFY(times.step());
  QVERIFY2(times.real(0) >= firstEnded, "the second seed run started before the first ended");
  // The live page followed the queue's runs, the last one last.
  QTRY_COMPARE_WITH_TIMEOUT(w.runController()->config().train.seed, int64_t{1337 + 2}, test::kPatienceMs);
  QTRY_VERIFY_WITH_TIMEOUT(!w.runController()->isActive(), test::kPatienceMs);
  QTRY_COMPARE_WITH_TIMEOUT(w.queueDock()->model()->waitingCount(), 0, test::kPatienceMs);
}

// "Find largest batch" runs `tokamak-engine find-batch --json` as a child (CUDA only, so a stand-in engine
// plays a GPU here): each try arrives as it is made, the answer at the end; a refusal is the engine's line.
void TestStudio::findsLargestBatchInAChild() {
  const QString engine = QString::fromStdString(env_->path("fake-engine.sh"));
  const auto fake = [&](const QByteArray& body) {
    QFile script(engine);
    QVERIFY(script.open(QIODevice::WriteOnly | QIODevice::Truncate));
    script.write("#!/bin/sh\n" + body);
    script.close();
    QVERIFY(script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
  };
  const QByteArray before = qgetenv("TOKAMAK_ENGINE_BIN");
  qputenv("TOKAMAK_ENGINE_BIN", engine.toUtf8());
  const auto restore = qScopeGuard([&] {
    if (before.isEmpty()) qunsetenv("TOKAMAK_ENGINE_BIN");
    else qputenv("TOKAMAK_ENGINE_BIN", before);
  });
  const QString argsFile = QString::fromStdString(env_->path("find-batch-args"));
  fake(QString("echo \"$@\" > '%1'\n"
               "echo '{\"event\":\"try\",\"batch\":1,\"fits\":true}'\n"
               "echo '{\"event\":\"try\",\"batch\":2,\"fits\":true}'\n"
               "echo '{\"event\":\"try\",\"batch\":4,\"fits\":false}'\n"
               "echo '{\"event\":\"largest\",\"batch\":2}'\n")
           .arg(argsFile)
           .toUtf8());
  BatchFinder finder;
  QSignalSpy tries(&finder, &BatchFinder::tried), done(&finder, &BatchFinder::finished);
  finder.start(tinyRun(data_, 3, "find"));
  QVERIFY(finder.isRunning());
  QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, test::kPatienceMs);
  QCOMPARE(tries.count(), 3);
  QCOMPARE(tries.at(2).at(0).toLongLong(), 4);
  QCOMPARE(tries.at(2).at(1).toBool(), false);
  QCOMPARE(done.at(0).at(0).toLongLong(), 2);
  QCOMPARE(done.at(0).at(1).toString(), QString());
  QFile args(argsFile);
  QVERIFY(args.open(QIODevice::ReadOnly));
  QVERIFY2(args.readAll().startsWith("find-batch --json --config "), "the child's command line");
  QVERIFY(!finder.isRunning());

  fake("echo 'tokamak: find-batch measures GPU memory (hint: run it with --set device=cuda)' >&2\nexit 1\n");
  finder.start(tinyRun(data_, 3, "find"));
  QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, test::kPatienceMs);
  QCOMPARE(done.at(1).at(0).toLongLong(), 0);
  QVERIFY2(done.at(1).at(1).toString().contains("find-batch measures GPU memory"),
           qPrintable(done.at(1).at(1).toString()));
}

QTEST_MAIN(TestStudio)
// "Start from weights…": the model takes the sizes of a Hugging Face GPT-2 folder and model.init_from names
// it; sizes changed afterwards are a problem that names the fix, and a run from the weights trains.
void TestStudio::startsFromHuggingFaceWeights() {
  const std::string hf = env_->path("hf-start");
  test::export_tiny_hf(hf, 50257);  // GPT-2's vocabulary, so the corpus' token ids fit
  MainWindow w;
  w.setCloseQuestion([] { return true; });
  SetupPanel& setup = *w.setupPanel();
  setup.setConfig(tinyRun(data_, 3, "from-weights"));
  const QString missing = setup.startFromWeights(QString::fromStdString(env_->path("no-such-folder")));
  QVERIFY2(missing.contains("does not exist"), qPrintable(missing));
  QVERIFY(setup.config().model.init_from.empty());  // nothing changed by a failed choice

  QCOMPARE(setup.startFromWeights(QString::fromStdString(hf)), QString());
  const Config c = setup.config();
  QCOMPARE(c.model.init_from, hf);
  QCOMPARE(c.model.n_layer, int64_t{2});
  QCOMPARE(c.model.n_embd, int64_t{32});
  QCOMPARE(c.model.context, int64_t{16});
  QCOMPARE(c.model.vocab_size, int64_t{50257});
  QVERIFY2(setup.canStart(), qPrintable(setup.problems().join('\n')));
  // The parameters in the file against the model's: 2 layers of width 32 and GPT-2's vocabulary.
  const qint64 expected = 50257 * 32 + 16 * 32 + 2 * (12 * 32 * 32 + 13 * 32) + 2 * 32;
  QCOMPARE(hf_weights_parameters(hf), int64_t{expected});
  QVERIFY2(setup.modelBox()->weightsText().startsWith("hf-start: 1.63M parameters, as the model"),
           qPrintable(setup.modelBox()->weightsText()));

  setup.keys()->setValue("model.n_layer", "3");
  setup.refreshNow();
  QVERIFY(!setup.canStart());
  QVERIFY2(setup.modelBox()->weightsText().contains("but the model has"), qPrintable(setup.modelBox()->weightsText()));
  const QString problem = setup.problems().join('\n');
  QVERIFY2(problem.contains("model.init_from") && problem.contains("model.n_layer=2"), qPrintable(problem));
  setup.keys()->setValue("model.n_layer", "2");
  setup.refreshNow();
  QVERIFY2(setup.canStart(), qPrintable(setup.problems().join('\n')));

  RunController* run = w.runController();
  w.startRun();
  QTRY_VERIFY_WITH_TIMEOUT(!run->isActive(), 90000);
  QCOMPARE(QString::fromStdString(run->lastEnd().status), QString("finished"));
  // What the child reported it trained: the config it started with names the weights.
  QCOMPARE(QString::fromStdString(config_from_json(run->runStart().config_json).model.init_from),
           QString::fromStdString(hf));

  setup.useRandomInit();
  setup.refreshNow();
  QVERIFY(setup.config().model.init_from.empty());
  QCOMPARE(setup.modelBox()->weightsText(), QString("random"));
}

#include "test_studio.moc"
