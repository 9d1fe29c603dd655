// The setup dock on first start (no saved settings) at common screen sizes, and at the narrowest and widest
// the user can drag it: every button, label and choice of the setup is reachable by vertical scrolling alone,
// and none is cut. An earlier fixed two-column layout showed only its first column at 1600×1000, with
// "Open ladde…" cut and every speed-up switch out of sight at the right. On first start every
// speed-up switch is in sight without scrolling, 1366×768 included (they were once below the fold under
// Where, Dataset and Model), and Where is on the toolbar.
#include <QtTest>

#include <QAbstractButton>
#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTableView>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QToolBar>

#include <nlohmann/json.hpp>

#include "engine/base/config/config.h"
#include "tests/support/scratch_env.h"
#include "ui/window/main_window.h"
#include "ui/remote/where_box.h"
#include "ui/history/runs_panel.h"
#include "ui/setup/section_columns.h"
#include "ui/setup/setup_panel.h"
#include "ui/setup/switches_box.h"

using namespace tokamak;
using namespace tokamak::ui;

namespace {

// Lets posted layout requests and resizes settle, as the first paint would.
void settle() {
  for (int i = 0; i < 5; ++i) {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    QCoreApplication::processEvents();
  }
}

QString describe(const QWidget* w) {
  QString text;
  if (auto* b = qobject_cast<const QAbstractButton*>(w)) text = b->text();
  else if (auto* l = qobject_cast<const QLabel*>(w)) text = l->text();
  else if (auto* c = qobject_cast<const QComboBox*>(w)) text = c->currentText();
  return QString("%1 \"%2\" (%3)").arg(w->metaObject()->className(), text.left(40), w->objectName());
}

// Every problem that keeps a control of the setup from being seen whole: outside the width the scroll area
// shows, or narrower than its text needs.
QStringList cutControls(SetupPanel* panel) {
  QStringList out;
  SectionColumns* area = panel->sections();
  QWidget* content = area->widget();
  if (area->horizontalScrollBar()->maximum() > 0)
    out << QString("a horizontal scroll of %1 px").arg(area->horizontalScrollBar()->maximum());
  if (content->width() > area->viewport()->width())
    out << QString("content %1 px wider than its %2 px viewport").arg(content->width()).arg(area->viewport()->width());
  for (QWidget* w : content->findChildren<QWidget*>()) {
    auto* button = qobject_cast<QAbstractButton*>(w);
    auto* label = qobject_cast<QLabel*>(w);
    auto* combo = qobject_cast<QComboBox*>(w);
    if (!(button || label || combo) || !w->isVisible()) continue;
    // Combos' popups and such are not in the content; only what sits in it is laid out by it.
    if (!content->isAncestorOf(w) || w->window() != content->window()) continue;
    const QRect r(w->mapTo(content, QPoint(0, 0)), w->size());
    if (r.left() < 0 || r.right() >= area->viewport()->width())
      out << describe(w) +
                 QString(" at x %1–%2, outside 0–%3").arg(r.left()).arg(r.right()).arg(area->viewport()->width());
    const bool wraps = label && label->wordWrap();
    if (!wraps && w->sizeHint().width() > w->width())
      out << describe(w) + QString(" cut: %1 px wide, needs %2").arg(w->width()).arg(w->sizeHint().width());
    if (wraps && !label->text().isEmpty() && label->heightForWidth(label->width()) > label->height())
      out << describe(w) +
                 QString(" cut: %1 px high, needs %2").arg(label->height()).arg(label->heightForWidth(label->width()));
  }
  return out;
}

// The speed-up switches (every choice, check box and number of the SwitchesBox) that do not lie wholly inside
// the scroll area's viewport as it is scrolled now; `count` gets how many there are.
QStringList switchesOutOfSight(SetupPanel* panel, int* count) {
  QStringList out;
  QWidget* viewport = panel->sections()->viewport();
  *count = 0;
  for (QWidget* w : panel->switchesBox()->findChildren<QWidget*>()) {
    if (!qobject_cast<QComboBox*>(w) && !qobject_cast<QAbstractButton*>(w) && !qobject_cast<QSpinBox*>(w)) continue;
    if (w->window() != panel->window()) continue;  // a combo's popup
    ++*count;
    const QRect r(w->mapTo(viewport, QPoint(0, 0)), w->size());
    if (!w->isVisible() || !viewport->rect().contains(r))
      out << describe(w) + QString(" at y %1–%2, viewport 0–%3").arg(r.top()).arg(r.bottom()).arg(viewport->height());
  }
  return out;
}

}  // namespace

class TestStudioLayout : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase();
  void init();
  void setupIsReachable_data();
  void setupIsReachable();
  void pagesKeepTheSetupLayout_data();
  void pagesKeepTheSetupLayout();
  void noTextCitesAnIssue();
  void aSavedSetupWithAKeyOfAnotherVersionKeepsTheRest();
  void aSavedSetupThatDoesNotLoadIsKept();

 private:
  std::unique_ptr<test::ScratchEnv> env_;
};

void TestStudioLayout::initTestCase() {
  env_ = std::make_unique<test::ScratchEnv>();  // the dataset box counts the default corpus in its own cache
  QVERIFY2(env_->ok(), "assets missing: run scripts/setup.sh");
  // The studio's settings (window state, the last setup) land in this process's own XDG_CONFIG_HOME, which
  // tests/support/isolated_process.cpp made empty: every studio suite relies on it, none on the user's.
  const QString home = qEnvironmentVariable("XDG_CONFIG_HOME");
  QVERIFY2(!home.isEmpty() && QSettings("Tokamak", "Tokamak Studio").fileName().startsWith(home + "/"),
           qPrintable(QSettings("Tokamak", "Tokamak Studio").fileName()));
}

void TestStudioLayout::init() { QSettings("Tokamak", "Tokamak Studio").clear(); }  // every test is a first start

void TestStudioLayout::setupIsReachable_data() {
  QTest::addColumn<QSize>("screen");
  QTest::addColumn<int>("dockWidth");  // 0 = as the first start leaves it; else dragged to this width
  for (QSize s : {QSize(1366, 768), QSize(1600, 1000), QSize(1920, 1080)}) {
    const QByteArray size = QByteArray::number(s.width()) + "x" + QByteArray::number(s.height());
    QTest::newRow(size + " first start") << s << 0;
    QTest::newRow(size + " dock dragged narrowest") << s << 50;
    QTest::newRow(size + " dock dragged widest") << s << s.width();
  }
}

void TestStudioLayout::setupIsReachable() {
  QFETCH(QSize, screen);
  QFETCH(int, dockWidth);
  MainWindow w;
  SetupPanel* panel = w.setupPanel();
  w.fitTo(QRect(QPoint(0, 0), screen));
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  auto* dock = w.findChild<QDockWidget*>("setupDock");
  QVERIFY(dock);
  if (dockWidth > 0) w.resizeDocks({dock}, {dockWidth}, Qt::Horizontal);
  settle();
  QVERIFY2(w.width() <= screen.width() && w.height() <= screen.height(),
           qPrintable(QString("window %1×%2, at least %3×%4; setup at least %5, plots at least %6")
                          .arg(w.width())
                          .arg(w.height())
                          .arg(w.minimumSizeHint().width())
                          .arg(w.minimumSizeHint().height())
                          .arg(panel->minimumSizeHint().width())
                          .arg(w.centralWidget()->minimumSizeHint().width())));
  QVERIFY2(dock->isVisible() && panel->width() >= panel->widthFor(1),
           qPrintable(QString("setup %1 px, one column needs %2").arg(panel->width()).arg(panel->widthFor(1))));
  const QStringList cut = cutControls(panel);
  QVERIFY2(cut.isEmpty(), qPrintable(cut.join("\n")));
  // The plots keep room beside the setup unless the user dragged the dock wide on purpose.
  if (dockWidth == 0)
    QVERIFY2(w.centralWidget()->width() >= w.width() / 2,
             qPrintable(QString("plots %1 px of %2").arg(w.centralWidget()->width()).arg(w.width())));
  if (dockWidth == 0) {
    // As the window opens, unscrolled, every speed-up switch is in sight; and Where is a toolbar line.
    QCOMPARE(panel->sections()->verticalScrollBar()->value(), 0);
    int count = 0;
    const QStringList hidden = switchesOutOfSight(panel, &count);
    QVERIFY2(count >= 14, qPrintable(QString("%1 switches found").arg(count)));  // precision … ZeRO-1
    QVERIFY2(hidden.isEmpty(), qPrintable(hidden.join("\n")));
    QWidget* where = panel->whereBox();
    QVERIFY(qobject_cast<QToolBar*>(where->parentWidget()));
    QVERIFY2(where->isVisible(), "Where is in the toolbar's overflow menu");  // a toolbar too long hides it there
  }
  // Beside the other sections, the switches start at the top: in sight without scrolling.
  SwitchesBox* switches = panel->switchesBox();
  if (panel->sections()->columns() == 2)
    QCOMPARE(switches->mapTo(panel->sections()->widget(), QPoint(0, 0)).y(),
             panel->findChild<QWidget*>("setupFiles")->mapTo(panel->sections()->widget(), QPoint(0, 0)).y());
  // The switches are reachable by scrolling down alone: scrolling to one brings it into the viewport.
  panel->sections()->ensureWidgetVisible(switches->findChild<QWidget*>("dist.zero"));
  settle();
  QWidget* zero = switches->findChild<QWidget*>("dist.zero");
  QVERIFY(zero);
  const QPoint at = zero->mapTo(panel->sections()->viewport(), QPoint(0, 0));
  QVERIFY2(panel->sections()->viewport()->rect().contains(QRect(at, zero->size())),
           qPrintable(QString("dist.zero at %1,%2").arg(at.x()).arg(at.y())));
  // With a host typed, Where's line grows by the tokamak command field and still fits its toolbar.
  if (dockWidth == 0) {
    WhereBox* where = panel->whereBox();
    where->findChild<QComboBox*>("where")->setCurrentText("someone@gpu-server.example.org:2222");
    settle();
    QVERIFY(where->findChild<QWidget*>("hostTokamak")->isVisible());
    QVERIFY2(where->isVisible(), "Where went into the toolbar's overflow menu");
    const QRect line(where->mapTo(&w, QPoint(0, 0)), where->size());
    QVERIFY2(line.right() < w.width(),
             qPrintable(QString("Where ends at x %1 of %2").arg(line.right()).arg(w.width())));
  }
}

void TestStudioLayout::pagesKeepTheSetupLayout_data() {
  QTest::addColumn<QSize>("screen");
  for (QSize s : {QSize(1366, 768), QSize(1600, 1000), QSize(1920, 1080)})
    QTest::newRow(QByteArray::number(s.width()) + "x" + QByteArray::number(s.height())) << s;
}

// Opening "Runs, compare and export" and coming back leaves the setup as it was: the dock keeps its width and
// its columns, so the switches stay in sight (at 1366×768 the runs page's least width once took the dock down
// to one column, the switches below the fold, and it stayed so on the way back). The runs page fits beside it,
// none of its controls cut.
void TestStudioLayout::pagesKeepTheSetupLayout() {
  QFETCH(QSize, screen);
  MainWindow w;
  SetupPanel* panel = w.setupPanel();
  w.fitTo(QRect(QPoint(0, 0), screen));
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  auto* dock = w.findChild<QDockWidget*>("setupDock");
  QVERIFY(dock);
  settle();
  const int width = dock->width(), columns = panel->sections()->columns();
  QCOMPARE(columns, 2);  // every screen here has room for both columns beside the live plots
  auto layoutNow = [&] {
    return QString("dock %1 px, %2 column(s); window %3 px of %4")
        .arg(dock->width())
        .arg(panel->sections()->columns())
        .arg(w.width())
        .arg(screen.width());
  };
  for (int round = 0; round < 2; ++round) {
    w.showRunsPage();
    settle();
    QVERIFY2(dock->width() == width && panel->sections()->columns() == columns, qPrintable(layoutNow()));
    QVERIFY2(w.width() <= screen.width(), qPrintable(layoutNow()));
    QWidget* runs = w.runsPanel();
    QVERIFY(runs->isVisible());
    QStringList cut;
    for (QWidget* c : runs->findChildren<QWidget*>()) {
      if (!c->isVisible() || c->window() != &w || !(qobject_cast<QAbstractButton*>(c) || qobject_cast<QComboBox*>(c)))
        continue;
      // The bar's buttons are whole; the compare view's boxes may shrink below their longest item, by design.
      const bool whole = c->parentWidget() == runs && qobject_cast<QAbstractButton*>(c);
      const QRect r(c->mapTo(runs, QPoint(0, 0)), c->size());
      if (r.right() >= runs->width() || (whole && c->width() < c->sizeHint().width()))
        cut << describe(c) + QString(" at x %1–%2 of %3, needs %4 px")
                                 .arg(r.left())
                                 .arg(r.right())
                                 .arg(runs->width())
                                 .arg(c->sizeHint().width());
    }
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join("\n")));
    // The runs table has room for several runs, each on one line (at 1366×768 it once showed one run, two lines
    // tall, above the compare view).
    auto* table = runs->findChild<QTableView*>();
    QVERIFY(table);
    const int rows = table->viewport()->height() / table->verticalHeader()->defaultSectionSize();
    QVERIFY2(rows >= 4 && !table->wordWrap(), qPrintable(QString("%1 rows in %2 px").arg(rows).arg(table->height())));
    w.showLivePage();
    settle();
    QVERIFY2(dock->width() == width && panel->sections()->columns() == columns, qPrintable(layoutNow()));
    int count = 0;
    const QStringList hidden = switchesOutOfSight(panel, &count);
    QVERIFY2(hidden.isEmpty(), qPrintable(hidden.join("\n")));
  }
}

// No text of the window cites an internal issue number: tooltips, labels, buttons, choices and actions are
// written for a user, who has never seen the tracker.
// A setup saved by a later version (a key this one lacks): the rest loads, the window names the key, and
// closing writes the setup back with that key in it.
void TestStudioLayout::aSavedSetupWithAKeyOfAnotherVersionKeepsTheRest() {
  const QString saved = R"({"optimizer": {"lr": 0.0042, "name": "muon"}, "train": {"steps": 777, "batch_size": 8},
    "model": {"preset": "mini"}, "speed": {"future_switch": true}})";
  QSettings("Tokamak", "Tokamak Studio").setValue("setup/config", saved);
  {
    MainWindow w;
    const Config c = w.setupPanel()->config();
    QCOMPARE(c.optimizer.lr, 0.0042);
    QCOMPARE(name_of(c.optimizer.name), std::string("muon"));
    QCOMPARE(c.train.steps, int64_t{777});
    QCOMPARE(c.model.preset, std::string("mini"));
    const QString said = w.statusBar()->currentMessage();
    QVERIFY2(said.contains("speed.future_switch") && said.contains("left out"), qPrintable(said));
    QVERIFY(w.close());
  }
  const auto back = nlohmann::json::parse(QSettings("Tokamak", "Tokamak Studio").value("setup/config").toString().toStdString());
  QCOMPARE(back["speed"]["future_switch"].get<bool>(), true);
  QCOMPARE(back["optimizer"]["lr"].get<double>(), 0.0042);
  QCOMPARE(back["train"]["steps"].get<int>(), 777);
}

// A saved setup that does not load at all: the defaults are shown with a word, and the saved one is not written
// over.
void TestStudioLayout::aSavedSetupThatDoesNotLoadIsKept() {
  const QString saved = R"({"optimizer": {"lr": 0.0042}, "train": )";
  QSettings("Tokamak", "Tokamak Studio").setValue("setup/config", saved);
  {
    MainWindow w;
    QCOMPARE(w.setupPanel()->config().optimizer.lr, Config{}.optimizer.lr);
    QVERIFY2(w.statusBar()->currentMessage().contains("could not be loaded"),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(w.close());
  }
  QCOMPARE(QSettings("Tokamak", "Tokamak Studio").value("setup/config").toString(), saved);
}

void TestStudioLayout::noTextCitesAnIssue() {
  const QRegularExpression issue(R"(\bissues? *#?\d)", QRegularExpression::CaseInsensitiveOption);
  MainWindow w;
  QStringList texts;
  for (QWidget* c : w.findChildren<QWidget*>()) {
    texts << c->toolTip() << c->whatsThis() << c->statusTip();
    if (auto* b = qobject_cast<QAbstractButton*>(c)) texts << b->text();
    if (auto* l = qobject_cast<QLabel*>(c)) texts << l->text();
    if (auto* box = qobject_cast<QComboBox*>(c))
      for (int i = 0; i < box->count(); ++i) texts << box->itemText(i) << box->itemData(i, Qt::ToolTipRole).toString();
  }
  for (QAction* a : w.findChildren<QAction*>()) texts << a->text() << a->toolTip() << a->statusTip();
  QVERIFY(texts.size() > 500);
  QStringList cited;
  for (const QString& t : texts)
    if (t.contains(issue)) cited << t.left(160);
  QVERIFY2(cited.isEmpty(), qPrintable(cited.join("\n")));
}

QTEST_MAIN(TestStudioLayout)
#include "test_studio_layout.moc"
