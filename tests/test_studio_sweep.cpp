// The studio's sweeps (ui/sweep): the Sweep… dialog plans from the setup as plan_sweep does (a 4×2 grid is 8
// trials, with its rungs) and refuses a bad key or value in one line with nothing queued; a real small sweep
// started from the dialog (the tiny model, ASHA min_steps 3, η 3) runs to its end with the queue worker, and
// the sweep view then ranks its trials, marks the best of each optimizer, shows which key matters, draws one
// point per trial on each key's plot (a log axis for the log-swept rate) and one line per trial in the
// parallel coordinates; "Train the best longer" queues a run whose config is the best's with more steps.
#include <QtTest>

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QScreen>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QThreadPool>
#include <QTimer>

#include <signal.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "engine/fleet/queue/queue_worker.h"
#include "engine/fleet/queue/run_queue.h"
#include "engine/fleet/queue/sweep_store.h"
#include "engine/base/store/run_store.h"
#include "engine/base/util/files.h"
#include "tests/support/run_reaper.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/window/main_window.h"
#include "ui/plots/qcp.h"
#include "ui/setup/setup_panel.h"
#include "ui/sweep/sweep_actions.h"
#include "ui/sweep/sweep_dialog.h"
#include "ui/sweep/sweep_plots.h"
#include "ui/sweep/sweep_view.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

// The tiny model on a corpus excerpt, one thread, an evaluation every 3 steps (the rungs' steps).
std::string tinyBase(const std::string& data, int steps) {
  Config c;
  apply_overrides(
      c, test::tiny_run_overrides({"data.path=" + data, "train.batch_size=2", "train.log_every=1", "sample.every=-1",
                                   "eval.every=3", "eval.batches=2", "schedule.warmup_steps=2", "threads=1",
                                   "checkpoint.minutes=0", "train.steps=" + std::to_string(steps)}));
  return config_to_json(c, -1);
}

SweepForm lrByOptimizer(int rates) {
  SweepForm f;
  f.name = "lr-opt";
  f.axes << SweepAxis{"optimizer.lr", true, {}, 1e-3, 1e-2, rates, true};
  f.axes << SweepAxis{"optimizer.name", false, {"adamw", "muon"}};
  f.asha = true, f.minSteps = 3, f.eta = 3;
  return f;
}

int queueRows(const QString& db) {
  RunStore store(db.toStdString());
  return int(RunQueue(store).list(true).size());
}

// Nothing queued or running, and the worker gone: a trial stopped at its rung is "stopped" for a moment before
// the worker promotes it, but the worker only exits once it has decided.
bool settled(const QString& db) {
  if (queue_worker_pid(db.toStdString()) != 0) return false;
  RunStore store(db.toStdString());
  for (const QueueItem& q : RunQueue(store).list())
    if (q.state == "queued" || q.state == "running") return false;
  return true;
}

nlohmann::json withoutStepsAndName(const std::string& config) {
  nlohmann::json j = nlohmann::json::parse(config);
  j["train"].erase("steps");
  j.erase("name");
  return j;
}

}  // namespace

class TestStudioSweep : public QObject {
  Q_OBJECT
  std::unique_ptr<test::ScratchEnv> env_;
  QString db_;

 private Q_SLOTS:
  void init() {
    env_ = std::make_unique<test::ScratchEnv>();
    db_ = QString::fromStdString(env_->path("runs.db"));
  }
  void cleanup() {
    const long worker = queue_worker_pid(db_.toStdString());
    if (worker > 0) ::kill(static_cast<pid_t>(worker), SIGKILL);
    test::kill_runs_under(qEnvironmentVariable("XDG_DATA_HOME").toStdString());
    env_.reset();
  }

  // An edit's plan was worked out on the GUI thread: a sweep of thousands of trials froze the window while the
  // user typed. It is now worked out on the thread pool and shown once ready (the newest edit's only). Shown by
  // holding the pool's one thread: the edit's replan fires and the window goes on without the plan, which comes
  // once the pool is free.
  void anEditIsPlannedOffTheGuiThread() {
    QVERIFY(env_->ok());
    SweepDialog dialog(tinyBase(env_->corpus_excerpt(20000), 100));
    dialog.setForm(lrByOptimizer(4));
    const QStringList before = dialog.trialNames();
    QVERIFY(!before.isEmpty());
    QThreadPool* pool = QThreadPool::globalInstance();
    pool->waitForDone();
    const int threads = pool->maxThreadCount();
    pool->setMaxThreadCount(1);
    QSemaphore held;
    pool->start([&held] { held.acquire(); });
    dialog.findChild<QLineEdit*>("sweepName")->setText("renamed");
    QTimer* replan = dialog.findChild<QTimer*>("replanTimer");
    QVERIFY(replan && replan->isActive());
    QTRY_VERIFY(!replan->isActive());  // the edit's replan has fired
    QCoreApplication::processEvents();
    const QStringList meanwhile = dialog.trialNames();
    held.release();
    QCOMPARE(meanwhile, before);  // the GUI thread did not plan it
    QTRY_VERIFY_WITH_TIMEOUT(dialog.trialNames().value(0).startsWith("renamed-p0-"), test::kPatienceMs);
    pool->waitForDone();
    pool->setMaxThreadCount(threads);
  }

  void planOfAGridCountsEveryTrialAndItsRungs() {
    QVERIFY(env_->ok());
    SweepDialog dialog(tinyBase(env_->corpus_excerpt(20000), 100));
    SweepForm f = lrByOptimizer(4);
    f.minSteps = 12;  // a multiple of eval_every 3: rungs 12, 36 below 100
    dialog.setForm(f);
    QVERIFY2(dialog.problem().isEmpty(), qPrintable(dialog.problem()));
    QCOMPARE(dialog.trialCount(), 4 * 2);
    QCOMPARE(dialog.rungs(), (QList<qint64>{12, 36}));
    QCOMPARE(dialog.trialNames().first(), QString("lr-opt-p0-lr=0.001-optimizer=adamw"));
    QCOMPARE(dialog.trialNames().last(), QString("lr-opt-p7-lr=0.01-optimizer=muon"));
    // Seeds multiply the points; random search draws `count` of them.
    f.seeds = {1, 2};
    dialog.setForm(f);
    QCOMPARE(dialog.trialCount(), 16);
    f.random = true, f.count = 5, f.seeds.clear();
    dialog.setForm(f);
    QCOMPARE(dialog.trialCount(), 5);
    // The form survives its own sweep file: what Start writes is what the dialog shows.
    const QString file = QString::fromStdString(env_->path("s.json"));
    write_file_atomically(file.toStdString(), dialog.sweepFile());
    SweepDialog reopened("{}");
    QVERIFY2(reopened.openFile(file), qPrintable(reopened.problem()));
    QCOMPARE(reopened.trialNames(), dialog.trialNames());
    QCOMPARE(reopened.sweepFile(), dialog.sweepFile());
  }

  void aBadKeyOrValueIsRefusedInOneLineAndNothingIsQueued() {
    QVERIFY(env_->ok());
    SweepDialog dialog(tinyBase(env_->corpus_excerpt(20000), 100));
    dialog.setDatabase(db_);
    SweepForm f = lrByOptimizer(2);
    f.axes[0].key = "train.lrr";
    dialog.setForm(f);
    QVERIFY2(dialog.problem().contains("unknown config key 'train.lrr'") && dialog.problem().contains("'optimizer.lr'"),
             qPrintable(dialog.problem()));
    QVERIFY(!dialog.problem().contains('\n'));
    QCOMPARE(dialog.trialCount(), 0);
    QVERIFY(!dialog.start());
    f = lrByOptimizer(2);
    f.axes << SweepAxis{"schedule.warmup_steps", false, {"2", "-5"}};
    dialog.setForm(f);
    QVERIFY2(dialog.problem().contains("trial 1 (") && dialog.problem().contains("schedule.warmup_steps"),
             qPrintable(dialog.problem()));
    QVERIFY(!dialog.start());
    f = lrByOptimizer(2);
    f.minSteps = 4;  // not a multiple of eval_every 3
    dialog.setForm(f);
    QVERIFY2(dialog.problem().contains("not a multiple of eval.every"), qPrintable(dialog.problem()));
    QVERIFY(!dialog.start());
    QVERIFY(!dialog.isStarting());
    QCOMPARE(queueRows(db_), 0);
    RunStore store(db_.toStdString());
    QCOMPARE(SweepStore(store).sweep_ids().size(), size_t{0});
  }

  // A sweep's name is the user's: a '/' or ".." in it never takes its file out of the sweeps folder. A folder already
  // at the sweep's place that holds a file of its own is never written into: the sweep is queued all the same, and
  // the dialog stays open to say why it has no file.
  void aSweepsNameNeverTakesItsFileOutOfTheSweepsFolder() {
    QVERIFY(env_->ok());
    const std::string base = tinyBase(env_->corpus_excerpt(20000), 3);
    SweepForm f;  // one trial of three steps: what is under test is where its file goes
    f.name = QStringLiteral("../../escaped");
    f.axes << SweepAxis{"optimizer.lr", false, {"0.001"}};
    const auto start = [&](SweepDialog& dialog) {
      dialog.setDatabase(db_);
      dialog.setForm(f);
      QSignalSpy started(&dialog, &SweepDialog::started), failed(&dialog, &SweepDialog::failed);
      if (!dialog.start()) return QVariantList{};
      if (!QTest::qWaitFor([&] { return !started.isEmpty() || !failed.isEmpty(); }, test::kPatienceMs)) return QVariantList{};
      return started.isEmpty() ? QVariantList{} : started.first();
    };
    const QString sweeps = QString::fromStdString(data_dir()) + QStringLiteral("/sweeps");
    SweepDialog first(base);
    const QVariantList one = start(first);
    QVERIFY2(!one.isEmpty(), qPrintable(first.problem()));
    const qint64 id = one.at(0).toLongLong();
    QCOMPARE(one.at(2).toString(), sweeps + QStringLiteral("/_.._.._escaped-%1/sweep.json").arg(id));
    QCOMPARE(read_file(one.at(2).toString().toStdString()), first.sweepFile());
    QVERIFY(!QFileInfo::exists(QString::fromStdString(data_dir()) + QStringLiteral("/../escaped-%1").arg(id)));

    const QString taken = sweeps + QStringLiteral("/_.._.._escaped-%1").arg(id + 1);  // the next sweep's place
    QVERIFY(QDir().mkpath(taken));
    write_file_atomically((taken + QStringLiteral("/notes.txt")).toStdString(), "mine");
    SweepDialog second(base);
    const QVariantList two = start(second);
    QVERIFY2(!two.isEmpty(), qPrintable(second.problem()));
    QCOMPARE(two.at(0).toLongLong(), id + 1);
    QCOMPARE(two.at(2).toString(), QString());
    QVERIFY2(second.problem().contains("queued (id") && second.problem().contains("a sweep does not make ('notes.txt')"),
             qPrintable(second.problem()));
    QCOMPARE(QDir(taken).entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("notes.txt")});
    QCOMPARE(read_file((taken + QStringLiteral("/notes.txt")).toStdString()), std::string("mine"));
    QCOMPARE(QDir(sweeps).entryList({QStringLiteral(".sweep-*")}, QDir::Files | QDir::Hidden), QStringList{});
    QCOMPARE(first.result(), int(QDialog::Accepted));
    QCOMPARE(second.result(), int(QDialog::Rejected));  // not closed: the line stays to be read
  }

  // With no sweep yet, the line that says how to start one is whole at 1366 px (it was cut to a third behind the
  // picker and the buttons only a sweep needs); those come back with the first sweep.
  void theEmptyViewSaysHowToStartOneInFull() {
    { RunStore create(db_.toStdString()); }
    SweepView view;
    view.resize(1366 - 40, 600);  // the window's width less the tab's frame
    view.show();
    view.setDatabase(db_);
    view.refresh();
    QLabel* state = nullptr;
    for (QLabel* l : view.findChildren<QLabel*>())
      if (l->text().startsWith("No sweeps yet")) state = l;
    QVERIFY(state);
    QTRY_VERIFY(state->isVisible());
    QVERIFY2(state->width() >= state->fontMetrics().horizontalAdvance(state->text()),
             qPrintable(QString("%1 px for %2 px of text").arg(state->width()).arg(
                 state->fontMetrics().horizontalAdvance(state->text()))));
    QVERIFY(!view.findChild<QComboBox*>("sweepPicker")->isVisible());
  }

  void runMenuOpensTheDialogOverTheSetup() {
    QVERIFY(env_->ok());
    MainWindow w;
    w.setDatabase(db_);
    Config c = w.setupPanel()->config();
    QVERIFY(w.findChildren<QAction*>().contains(w.sweeps()->action()));
    SweepDialog* dialog = w.sweeps()->openDialog();
    QVERIFY(dialog);
    const nlohmann::json file = nlohmann::json::parse(dialog->sweepFile());
    c.name.clear();
    QCOMPARE(file["base"].dump(), nlohmann::json::parse(config_to_json(c, -1)).dump());
    auto* pages = w.findChild<QTabWidget*>();
    QVERIFY(pages && pages->indexOf(w.sweeps()->view()) >= 0);
    dialog->close();
  }

  void aSweepFromTheDialogRunsAndTheViewRanksIt() {
    QVERIFY(env_->ok());
    // 2 rates × 2 optimizers, 27 steps, rungs at 3 and 9: every trial trains 3 steps, the best goes on to 9
    // and (with no trial finished) on to the end.
    SweepDialog dialog(tinyBase(env_->corpus_excerpt(20000), 27));
    dialog.setDatabase(db_);
    dialog.setForm(lrByOptimizer(2));
    QVERIFY2(dialog.problem().isEmpty(), qPrintable(dialog.problem()));
    QCOMPARE(dialog.rungs(), (QList<qint64>{3, 9}));
    QSignalSpy started(&dialog, &SweepDialog::started), failed(&dialog, &SweepDialog::failed);
    QVERIFY(dialog.start());
    QTRY_VERIFY_WITH_TIMEOUT(!started.isEmpty() || !failed.isEmpty(), test::kPatienceMs);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    const qint64 id = started.first().at(0).toLongLong();
    // The sweep file lies in the sweep's folder, as Start wrote it.
    const QString file = started.first().at(2).toString();
    QCOMPARE(file, QString::fromStdString(data_dir()) + QString("/sweeps/lr-opt-%1/sweep.json").arg(id));
    QCOMPARE(read_file(file.toStdString()), dialog.sweepFile());
    QCOMPARE(queueRows(db_), 4);

    SweepView view;
    view.setDatabase(db_);
    QTRY_VERIFY_WITH_TIMEOUT(settled(db_), 10 * test::kPatienceMs);
    view.refresh();
    QCOMPARE(view.currentSweep(), id);
    const SweepResults& r = view.results();
    QCOMPARE(r.trials.size(), 4);
    qint64 trained = 0;  // each trial trained to the step of its highest rung (a promoted one resumes)
    for (const SweepTrialRow& t : r.trials) {
      QVERIFY2(std::isfinite(t.metric), qPrintable(t.name));
      trained += t.step;
    }
    qInfo("the sweep trained %lld steps in all (4 trials to the end would be 108)", static_cast<long long>(trained));

    // Ranked: further trained first, then by the metric (lower is better); the best trained to the end.
    QTableWidget* table = view.table();
    QCOMPARE(table->rowCount(), 4);
    const int metricColumn = 2 + int(r.keys.size()), stepColumn = metricColumn + 1;
    QCOMPARE(table->horizontalHeaderItem(metricColumn)->text(), QString("best_val_loss"));
    QCOMPARE(table->item(0, stepColumn)->text(), QString("27"));
    QCOMPARE(table->item(0, stepColumn + 1)->text(), QString("done"));
    for (int row = 1; row < 4; ++row) {
      const qint64 above = table->item(row - 1, stepColumn)->text().toLongLong();
      const qint64 here = table->item(row, stepColumn)->text().toLongLong();
      QVERIFY(above >= here);
      if (above == here)
        QVERIFY(table->item(row - 1, metricColumn)->text().toDouble() <=
                table->item(row, metricColumn)->text().toDouble());
      QCOMPARE(table->item(row, 0)->text(), QString::number(row + 1));
    }
    // The best of each optimizer is marked, once, on the first row of that optimizer.
    for (const QString& optimizer : {QString("adamw"), QString("muon")}) {
      int marks = 0, first = -1;
      for (int row = 0; row < 4; ++row) {
        if (table->item(row, 3)->text() == optimizer && first < 0) first = row;
        if (table->item(row, table->columnCount() - 1)->text() == "optimizer.name=" + optimizer) {
          ++marks;
          QCOMPARE(row, first);
        }
      }
      QCOMPARE(marks, 1);
    }
    // Which key matters: Spearman's ρ for the rate, the optimizer compared by its means.
    QVERIFY2(view.importanceText().contains("Spearman"), qPrintable(view.importanceText()));
    QVERIFY2(view.importanceText().contains("optimizer.lr: ρ ="), qPrintable(view.importanceText()));
    QVERIFY2(view.importanceText().contains("optimizer.name: a choice"), qPrintable(view.importanceText()));
    // One point per trial on each key's plot (at its highest rung); the rate on a log axis; the optimizer's
    // categories on its axis.
    QCOMPARE(view.keyPlots()->plots().size(), 2);
    for (int k = 0; k < 2; ++k) {
      QCOMPARE(view.keyPlots()->pointCount(k), 4);
      QCustomPlot* plot = view.keyPlots()->plots()[k];
      int points = 0;
      for (int g = 0; g + 1 < plot->graphCount(); ++g) points += plot->graph(g)->dataCount();
      QCOMPARE(points, 4);
      QCOMPARE(plot->graph(plot->graphCount() - 1)->dataCount(), 2);  // the best of each optimizer, ringed
    }
    QCOMPARE(view.keyPlots()->plots()[0]->xAxis->scaleType(), QCPAxis::stLogarithmic);
    QCOMPARE(view.keyPlots()->plots()[1]->xAxis->scaleType(), QCPAxis::stLinear);
    QVERIFY(view.keyPlots()->plots()[1]->xAxis->ticker().dynamicCast<QCPAxisTickerText>());
    QCOMPARE(view.parallel()->lineCount(), 4);
    QCOMPARE(view.parallel()->axisLabels(), (QStringList{"lr (log)", "optimizer", "metric"}));

    // Exports: the ranked table in three formats, the plots beside each other.
    const QString csv = QString::fromStdString(env_->path("trials.csv"));
    QCOMPARE(view.exportTable("csv", csv), QString());
    QCOMPARE(QString::fromStdString(read_file(csv.toStdString())).trimmed().split('\n').size(), 5);
    const QString json = QString::fromStdString(env_->path("trials.json"));
    QCOMPARE(view.exportTable("json", json), QString());
    QCOMPARE(
        QJsonDocument::fromJson(QByteArray::fromStdString(read_file(json.toStdString())))["trials"].toArray().size(),
        4);
    QStringList written;
    QCOMPARE(view.exportPlots(QString::fromStdString(env_->path("sweep.png")), &written), QString());
    QCOMPARE(written.size(), 3);
    for (const QString& w : written) QVERIFY(QFileInfo(w).size() > 0);
    // The dialog asked about sweep.png alone: a key plot beside it that was not asked about is refused, and
    // nothing of the export is written; once asked about, it is replaced.
    const QString png = written[0], keyPlot = written[1];
    write_file_atomically(png.toStdString(), "the parallel plot, kept");
    const QString refused = view.exportPlots(png, nullptr, true);
    QVERIFY2(refused.contains(QFileInfo(keyPlot).fileName() + "' exists"), qPrintable(refused));
    QCOMPARE(read_file(png.toStdString()), std::string("the parallel plot, kept"));
    QCOMPARE(view.exportPlots(png, nullptr, true, {written[1], written[2]}), QString());
    QVERIFY(read_file(png.toStdString()) != "the parallel plot, kept");

    // Train the best longer: the best's config with more steps, queued; the worker trains it.
    const SweepTrialRow best = r.trials.first();
    QSignalSpy queued(&view, &SweepView::trainQueued);
    QVERIFY(view.trainBestLonger(36));
    QTRY_VERIFY_WITH_TIMEOUT(!queued.isEmpty(), test::kPatienceMs);
    const qint64 item = queued.first().at(0).toLongLong();
    QVERIFY2(item > 0, qPrintable(view.message()));
    RunStore store(db_.toStdString());
    const QueueItem q = RunQueue(store).item(item);
    QCOMPARE(config_from_json(q.config_json).train.steps, int64_t{36});
    QCOMPARE(withoutStepsAndName(q.config_json).dump(), withoutStepsAndName(best.configJson.toStdString()).dump());
    QCOMPARE(QString::fromStdString(q.name), best.name + "-longer-36");
    QTRY_VERIFY_WITH_TIMEOUT(settled(db_), 4 * test::kPatienceMs);
    QCOMPARE(RunQueue(store).item(item).state, std::string("done"));
  }

  // Docs screenshot (scripts/screenshot-sweep.sh): TOKAMAK_SCREENSHOT_DB=<a store with a sweep that ran>
  // TOKAMAK_SCREENSHOT_OUT=<png>, under Xvfb: the window at the screen's size, on the Sweeps page.
  void screenshot() {
    const QString db = qEnvironmentVariable("TOKAMAK_SCREENSHOT_DB"),
                  out = qEnvironmentVariable("TOKAMAK_SCREENSHOT_OUT");
    if (db.isEmpty() || out.isEmpty())
      QSKIP("set TOKAMAK_SCREENSHOT_DB and TOKAMAK_SCREENSHOT_OUT to grab the sweep view");
    MainWindow w;
    w.setDatabase(db);
    w.fitTo(QGuiApplication::primaryScreen()->availableGeometry());
    auto* pages = w.findChild<QTabWidget*>();
    QVERIFY(pages);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    pages->setCurrentWidget(w.sweeps()->view());
    w.sweeps()->view()->refresh();
    QVERIFY(w.sweeps()->view()->currentSweep() > 0);
    QTest::qWait(3000);  // the dataset box's token count ends, as a user would see it
    QVERIFY(w.grab().save(out));
  }
};

QTEST_MAIN(TestStudioSweep)
#include "test_studio_sweep.moc"
