// "Install…" beside Test connection, driven as a user drives it, against a real sshd on loopback whose sessions
// have a fresh home (tests/test_remote_install.cpp covers the command's every case): a python there without
// torch 2.11 is refused in one line before anything is pushed; with the set-up's python the install shows its
// steps and the push's bar, ends with the version and the 3 steps trained there, and hands the host's tokamak
// command back to "Tokamak there", whose connection test then passes. The dialog fits a 1366×768 screen.
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "engine/fleet/remote/host_install.h"
#include "engine/base/util/files.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/studio_host.h"
#include "tests/support/test_support.h"
#include "ui/remote/install_dialog.h"
#include "ui/remote/where_box.h"
#include "ui/setup/setup_panel.h"
#include "ui/window/main_window.h"

using namespace tokamak;
using namespace tokamak::ui;

class TestStudioInstall : public QObject {
  Q_OBJECT

  std::unique_ptr<test::ScratchEnv> env_;
  std::unique_ptr<test::SshHost> ssh_;
  std::string home_;

 private Q_SLOTS:
  void initTestCase() {
    env_ = std::make_unique<test::ScratchEnv>();
    QVERIFY(env_->ok());
    home_ = env_->path("host-home");
    QVERIFY(QDir().mkpath(QString::fromStdString(home_ + "/.local/bin")));
    const QString home = QString::fromStdString(home_);
    ssh_ = std::make_unique<test::SshHost>(
        *env_, QStringList{"HOME=" + home, "PATH=" + home + "/.local/bin:/usr/bin:/bin"}, "fresh-gpu");
    QVERIFY2(ssh_->ok(), qPrintable(ssh_->error()));
  }

  void cleanup() {
    if (ssh_) ssh_->end_runs();
  }

  void cleanupTestCase() { ssh_.reset(); }

  void installFromTheToolbar() {
    MainWindow w;
    w.resize(1366, 768);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    WhereBox* where = w.setupPanel()->whereBox();
    auto* installButton = where->findChild<QPushButton*>("installOnHost");
    QVERIFY(installButton);
    QVERIFY(!installButton->isVisible());  // this computer: nothing to install
    test::choose_host(w, "fresh-gpu", "tokamak");
    QVERIFY(installButton->isVisible());
    // Before: the host has no Tokamak, and the test says how to get one.
    QSignalSpy tested(where, &WhereBox::tested);
    where->findChild<QPushButton*>("testConnection")->click();
    QVERIFY(tested.wait(60000));
    QVERIFY2(!tested.last().first().toBool() && where->resultText().contains("tokamak remote install"),
             qPrintable(where->resultText()));

    InstallDialog* dialog = where->installOnHost();
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY2(dialog->width() <= 1366 && dialog->height() <= 768, "the dialog is larger than a 1366×768 screen");
    auto* python = dialog->findChild<QLineEdit*>("torchPython");
    auto* start = dialog->findChild<QPushButton*>("startInstall");
    auto* bar = dialog->findChild<QProgressBar*>("installProgress");
    QVERIFY(python && start && bar);
    QSignalSpy ended(dialog, &InstallDialog::ended);

    // A python there without torch: refused in one line, nothing pushed.
    python->setText("/usr/bin/python3");
    start->click();
    QVERIFY(ended.wait(300000));
    QVERIFY(!ended.last().first().toBool());
    QVERIFY2(dialog->resultText().contains("torch 2.11") && dialog->resultText().contains("hint:") &&
                 !dialog->resultText().contains('\n'),
             qPrintable(dialog->resultText()));
    QVERIFY(!path_exists(install_dir(home_)));

    // The set-up's python: the install goes through, its push shown on the bar.
    python->setText(QString::fromStdString(test::python()));
    int highest = 0;
    connect(bar, &QProgressBar::valueChanged, this, [&](int v) { highest = std::max(highest, v); });
    start->click();
    QVERIFY(ended.wait(900000));
    QVERIFY2(ended.last().first().toBool(), qPrintable(dialog->resultText()));
    QCOMPARE(highest, 100);
    QVERIFY2(dialog->resultText().startsWith("installed Tokamak " TOKAMAK_VERSION " on ") &&
                 dialog->resultText().contains("3 steps there:") && dialog->resultText().contains("step 3"),
             qPrintable(dialog->resultText()));
    // "Tokamak there" now names what the install made, and the connection test passes with it.
    QTRY_VERIFY_WITH_TIMEOUT(tested.size() >= 2, 60000);
    QCOMPARE(where->tokamakCommand(), QString("tokamak"));
    QVERIFY2(tested.last().first().toBool(), qPrintable(where->resultText()));
    QVERIFY2(where->resultText().startsWith("Tokamak " TOKAMAK_VERSION " · "), qPrintable(where->resultText()));
    dialog->close();
  }
};

QTEST_MAIN(TestStudioInstall)
#include "test_studio_install.moc"
