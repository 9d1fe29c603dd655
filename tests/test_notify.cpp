// Notifications reach the person through real parts: a session dbus-daemon (Debian's) started by the test, with
// this process listening on it as org.freedesktop.Notifications (Qt's D-Bus module), and nginx on loopback as the
// webhook. A run of `tokamak train` tells both that it finished; a kind turned off tells neither; a bad settings
// file costs the run nothing but its notifications, said in one line.
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "engine/core/run/notify.h"
#include "engine/core/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/nginx_server.h"
#include "tests/support/scratch_env.h"
#include "tests/support/tiny.h"

using namespace tokamak;

// The freedesktop interface's one method a sender needs, recording what it was given.
class NotificationListener : public QObject {
  Q_OBJECT
  Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")

 public:
  QStringList apps, summaries, bodies;

 public Q_SLOTS:
  uint Notify(const QString& app, uint, const QString&, const QString& summary, const QString& body,
              const QStringList&, const QVariantMap&, int) {
    apps << app, summaries << summary, bodies << body;
    return static_cast<uint>(summaries.size());
  }
  QStringList GetCapabilities() { return {"body"}; }
};

class TestNotify : public QObject {
  Q_OBJECT

  QTemporaryDir busDir_;
  QProcess bus_;
  QString address_;
  NotificationListener listener_;

  // A tiny run through the real CLI, with this test's bus as its session's.
  test::CliResult train(test::ScratchEnv& env) {
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("DBUS_SESSION_BUS_ADDRESS", address_);
    QProcess p;
    p.setProcessEnvironment(e);
    p.start(test::tokamak_bin(), QStringList{"train", "--no-store"} +
                                     test::set_args(test::quiet_run_overrides(env.corpus_excerpt(20000), 3)));
    // The listener answers on this thread: the event loop runs while the run trains.
    QElapsedTimer t;
    t.start();
    while (p.state() != QProcess::NotRunning && t.elapsed() < 300000) QTest::qWait(50);
    test::CliResult r;
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput(), r.err = p.readAllStandardError();
    return r;
  }

 private Q_SLOTS:
  void initTestCase() {
    if (!QFile::exists("/usr/bin/dbus-daemon") || !QFile::exists("/usr/bin/gdbus"))
      QSKIP("needs Debian's dbus-daemon and libglib2.0-bin (scripts/setup.sh installs them)");
    bus_.start("dbus-daemon", {"--session", "--nofork", "--print-address=1",
                               "--address=unix:path=" + busDir_.filePath("bus")});
    QVERIFY(bus_.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(bus_.canReadLine(), 10000);
    address_ = QString::fromUtf8(bus_.readLine()).trimmed();
    QDBusConnection c = QDBusConnection::connectToBus(address_, "notifications");
    QVERIFY2(c.isConnected(), qPrintable(c.lastError().message()));
    QVERIFY(c.registerService("org.freedesktop.Notifications"));
    QVERIFY(c.registerObject("/org/freedesktop/Notifications", &listener_, QDBusConnection::ExportAllSlots));
  }
  void cleanupTestCase() {
    QDBusConnection::disconnectFromBus("notifications");
    bus_.terminate();
    bus_.waitForFinished(5000);
  }

  void aFinishedRunTellsTheDesktopAndTheWebhook() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    test::NginxServer web;
    web.addWebhook("hook");
    QVERIFY2(web.start(), qPrintable(web.error()));
    NotifySettings s;
    s.webhook = web.endpoint().toStdString() + "/hook";
    write_notify_settings(s);
    const qsizetype before = listener_.summaries.size();
    const test::CliResult r = train(env);
    QVERIFY2(r.code == 0, r.err.constData());
    QTRY_COMPARE(listener_.summaries.size(), before + 1);
    QCOMPARE(listener_.apps.last(), QString("Tokamak"));
    QVERIFY2(listener_.summaries.last().endsWith(" finished"), qPrintable(listener_.summaries.last()));
    QCOMPARE(listener_.bodies.last(), QString("step 3"));
    QTRY_COMPARE(web.webhookBodies().size(), 1);
    const QJsonObject hook = QJsonDocument::fromJson(web.webhookBodies().first().toUtf8()).object();
    QCOMPARE(hook["kind"].toString(), QString("finished"));
    QCOMPARE(hook["step"].toInt(), 3);
    QCOMPARE(hook["title"].toString(), listener_.summaries.last());
    QVERIFY(hook["text"].toString().startsWith(hook["title"].toString() + ": "));
    QVERIFY(!r.err.contains("notification was not sent"));

    // Off for "finished": nothing on either.
    s.off = {"finished"};
    write_notify_settings(s);
    QCOMPARE(train(env).code, 0);
    QTest::qWait(500);
    QCOMPARE(listener_.summaries.size(), before + 1);
    QCOMPARE(web.webhookBodies().size(), 1);
  }

  // What goes wrong is said, never fatal to the run: a webhook nobody answers, a settings file that is not JSON.
  void failuresAreOneLineAndTheRunGoesOn() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    NotifySettings s;
    s.desktop = false;
    s.webhook = "http://127.0.0.1:9/hook";  // the discard port: nothing answers
    write_notify_settings(s);
    test::CliResult r = train(env);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("tokamak: note: a notification was not sent: the webhook http://127.0.0.1:9/hook was "
                            "not reached"),
             r.err.constData());
    write_file_atomically(notify_settings_path(), "{\"webhook\": 3}");
    r = train(env);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("tokamak: warning: no notifications for this run: notification settings ") &&
                 r.err.contains("\"webhook\" must be a URL"),
             r.err.constData());
    // The sender says why a desktop cannot be told.
    qunsetenv("DBUS_SESSION_BUS_ADDRESS");
    QVERIFY(QString::fromStdString(send_desktop({"finished", "t", "b", "", "", 1})).contains("no session D-Bus"));
  }
};

QTEST_GUILESS_MAIN(TestNotify)
#include "test_notify.moc"
