// The studio's Playground page at 1366×768, on a run trained here with checkpoints at steps 10 and 20: the text streams
// in token by token and is the text `tokamak generate` makes with the same run, step, prompt, settings and seed; each
// try is kept with the run (the store's playground rows, the page's list); side by side, two checkpoints of the run
// answer the same prompt at once, each as the CLI would; Stop ends a try and keeps nothing; a store with no
// checkpoint says what to do. TOKAMAK_SCREENSHOT_OUT grabs the window for docs/USING.md.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTreeWidget>
#include <QtTest>
#include <set>

#include "engine/base/store/run_store.h"
#include "tests/support/cli_runner.h"
#include "tests/support/scratch_env.h"
#include "tests/support/test_support.h"
#include "tests/support/tiny.h"
#include "ui/playground/playground_view.h"
#include "ui/window/main_window.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

const QString kPrompt = QStringLiteral("The hacker");

}  // namespace

class TestStudioPlayground : public QObject {
  Q_OBJECT
  std::unique_ptr<test::ScratchEnv> env_;
  QString db_, uid_;

  // What `tokamak generate` prints for the run at STEP with the page's settings (tokens, seed and the rest).
  QString cliText(qint64 step, int tokens) {
    test::CliResult r = test::run_tokamak({"generate", "--run", uid_, "--db", db_, "--step", QString::number(step),
                                           "--prompt", kPrompt, "--tokens", QString::number(tokens), "--temperature",
                                           "0.9", "--top-k", "20", "--top-p", "0.95", "--seed", "7"});
    if (r.code != 0) qWarning("%s", r.err.constData());
    QString text = r.out_text();
    if (text.endsWith('\n')) text.chop(1);
    return text;
  }

  void setUp(PlaygroundView* p, int tokens) {
    p->temperature()->setValue(0.9);
    p->topK()->setValue(20);
    p->topP()->setValue(0.95);
    p->tokens()->setValue(tokens);
    p->seed()->setValue(7);
    p->prompt()->setPlainText(kPrompt);
  }

  // The window at 1366×768 on the suite's store, its Playground page shown; null if the window never showed.
  PlaygroundView* showPlayground(MainWindow& w) {
    w.setDatabase(db_);
    w.resize(1366, 768);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w)) return nullptr;
    w.findChild<QTabWidget*>()->setCurrentWidget(w.playground());
    return w.playground();
  }

  int plays() {
    RunStore store(db_.toStdString());
    return int(store.plays(store.resolve(uid_.toStdString())).size());
  }

 private Q_SLOTS:
  void initTestCase() {
    QVERIFY2(QFile::exists(test::tokamak_bin()), "run through ctest (TOKAMAK_TOKAMAK_BIN)");
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    db_ = QString::fromStdString(env_->path("runs.db"));
    test::CliResult t = test::run_tokamak(
        QStringList{"train", "--json", "--db", db_, "--name", "playground run"} +
        test::set_args(test::quiet_run_overrides(
            "", 20, {"checkpoint.dir=" + env_->path("ckpt"), "checkpoint.every=10", "train.log_every=5"})));
    QVERIFY2(t.code == 0, t.err.constData());
    RunStore store(db_.toStdString());
    const auto ids = store.run_ids();
    QCOMPARE(int(ids.size()), 1);
    uid_ = QString::fromStdString(store.run(ids.front()).uid);
    QCOMPARE(int(store.checkpoints(ids.front()).size()), 2);
  }

  void streamsTheCliTextAndKeepsIt() {
    MainWindow w;
    PlaygroundView* p = showPlayground(w);
    QVERIFY(p);
    QVERIFY(p->pick(0, uid_, 20));
    QCOMPARE(p->stepBox(0)->count(), 2);  // steps 20 and 10, newest first
    QCOMPARE(p->stepBox(0)->itemData(1).toLongLong(), qint64(10));
    setUp(p, 24);
    // In sight at 1366×768: the prompt, the settings, Generate and the text.
    for (QWidget* v : {static_cast<QWidget*>(p->prompt()), static_cast<QWidget*>(p->generateButton()),
                       static_cast<QWidget*>(p->seed()), static_cast<QWidget*>(p->output(0))}) {
      QVERIFY(v->isVisible());
      const QRect r(v->mapTo(&w, QPoint(0, 0)), v->size());
      QVERIFY2(w.rect().contains(r), qPrintable(v->metaObject()->className()));
    }
    QVERIFY(p->generateButton()->isEnabled());
    QTest::mouseClick(p->generateButton(), Qt::LeftButton);
    QVERIFY(p->isGenerating());
    QVERIFY(!p->generateButton()->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(!p->isGenerating(), test::kPatienceMs);
    const QString text = p->output(0)->toPlainText();
    QVERIFY2(text.startsWith(kPrompt) && text.size() > kPrompt.size(), qPrintable(text));
    QVERIFY2(p->streamedEvents(0) >= 12, qPrintable(QString::number(p->streamedEvents(0))));  // token by token
    QCOMPARE(text, cliText(20, 24));
    QVERIFY2(p->message().startsWith("Kept with the run"), qPrintable(p->message()));
    QCOMPARE(plays(), 1);
    QCOMPARE(p->kept()->topLevelItemCount(), 1);
    QTreeWidgetItem* kept = p->kept()->topLevelItem(0);
    QCOMPARE(kept->text(1), QString("20"));
    QCOMPARE(kept->text(2), kPrompt);
    QVERIFY2(kept->text(3).contains("k 20") && kept->text(3).contains("seed 7"), qPrintable(kept->text(3)));
    p->output(0)->clear();
    p->kept()->setCurrentItem(kept);  // a kept try shows its text again
    QCOMPARE(p->output(0)->toPlainText(), text);
    // `runs show` tells it too.
    test::CliResult show = test::run_tokamak({"runs", "show", uid_, "--db", db_});
    QVERIFY2(show.code == 0 && show.out.contains("playground: 1\n  last (step 20, "), show.out.constData());
  }

  void twoCheckpointsSideBySide() {
    MainWindow w;
    PlaygroundView* p = showPlayground(w);
    QVERIFY(p);
    setUp(p, 16);
    p->sideBySide()->setChecked(true);
    QVERIFY(p->output(1)->isVisible());
    QVERIFY(p->pick(0, uid_, 20));
    QVERIFY(p->pick(1, uid_, 10));
    const int before = plays();
    p->generate();
    QTRY_VERIFY_WITH_TIMEOUT(!p->isGenerating(), test::kPatienceMs);
    QVERIFY(p->streamedEvents(0) > 1 && p->streamedEvents(1) > 1);
    QCOMPARE(p->output(0)->toPlainText(), cliText(20, 16));
    QCOMPARE(p->output(1)->toPlainText(), cliText(10, 16));
    QCOMPARE(plays(), before + 2);
    RunStore store(db_.toStdString());
    const auto rows = store.plays(store.resolve(uid_.toStdString()));
    std::multiset<int64_t> steps{rows[rows.size() - 1].step, rows[rows.size() - 2].step};
    QCOMPARE(steps, (std::multiset<int64_t>{10, 20}));
    const QString out = qEnvironmentVariable("TOKAMAK_SCREENSHOT_OUT");
    if (!out.isEmpty()) QVERIFY(w.grab().save(out));
  }

  void stopEndsATryAndKeepsNothing() {
    PlaygroundView p;
    p.setDatabase(db_);
    p.resize(900, 600);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    QVERIFY(p.pick(0, uid_));
    setUp(&p, 1024);
    const int before = plays();
    p.generate();
    QVERIFY(p.isGenerating());
    QVERIFY(p.stopButton()->isEnabled());
    QTest::mouseClick(p.stopButton(), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!p.isGenerating(), test::kPatienceMs);
    QCOMPARE(p.message(), QString("Stopped"));
    QCOMPARE(plays(), before);
  }

  void noCheckpointSaysWhatToDo() {
    test::ScratchEnv empty;
    PlaygroundView p;
    p.setDatabase(QString::fromStdString(empty.path("runs.db")));
    p.refresh();
    QVERIFY2(p.message().startsWith("No run here has a checkpoint yet"), qPrintable(p.message()));
    QVERIFY(!p.generateButton()->isEnabled());
  }
};

QTEST_MAIN(TestStudioPlayground)
#include "test_studio_playground.moc"
