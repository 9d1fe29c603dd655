// Notifications reach the person through real parts: a session dbus-daemon (Debian's) started by the test, with
// this process listening on it as org.freedesktop.Notifications (Qt's D-Bus module), and nginx on loopback as the
// webhook. A run of `tokamak train` tells both that it finished, and so does a run on an SSH host (real sshd)
// through `tokamak remote`; a kind turned off tells neither; a bad settings
// file costs the run nothing but its notifications, said in one line.
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "engine/fleet/notify/notify.h"
#include "engine/fleet/notify/notify_sink.h"
#include "engine/base/util/files.h"
#include "tests/support/cli_runner.h"
#include "tests/support/nginx_server.h"
#include "tests/support/scratch_env.h"
#include "tests/support/ssh_host.h"
#include "tests/support/test_support.h"
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

  // nginx with a webhook at /hook, and the settings that send every kind there and to the desktop.
  static bool hookUp(test::NginxServer& web) {
    web.addWebhook("hook");
    if (!web.start()) return false;
    NotifySettings s;
    s.webhook = web.endpoint().toStdString() + "/hook";
    write_notify_settings(s);
    return true;
  }

  // A tiny run through the real CLI, with this test's bus as its session's.
  test::CliResult train(test::ScratchEnv& env) {
    return tokamak(QStringList{"train", "--no-store"} +
                   test::set_args(test::quiet_run_overrides(env.corpus_excerpt(20000), 3)));
  }
  test::CliResult tokamak(const QStringList& args, const QStringList& env = {}) {
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    e.insert("DBUS_SESSION_BUS_ADDRESS", address_);
    for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    QProcess p;
    p.setProcessEnvironment(e);
    p.start(test::tokamak_bin(), args);
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
      QFAIL("needs Debian's dbus-daemon and libglib2.0-bin (scripts/setup.sh installs them)");
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
    QVERIFY2(hookUp(web), qPrintable(web.error()));
    NotifySettings s = read_notify_settings();
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

  // TOKAMAK_TRY_SPIKE_AT, how a person tries the alarms: garbage tokens at step 25 of a run (test_health's spiky
  // setup) are a real spike, told once; a bad value is a one-line error before any work.
  void aTriedSpikeIsTold() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    NotifySettings s;
    // A loaded machine can really slow a step of this run, and that slowdown would be told too; only the spike is
    // under test here.
    s.off = {"finished", "slowdown", "stalled"};
    write_notify_settings(s);
    const qsizetype before = listener_.summaries.size();
    const QStringList run = QStringList{"train", "--no-store"} +
                            test::set_args(test::two_block_run_overrides(
                                env.corpus_excerpt(60000),
                                {"train.steps=30", "health.spike_window=10", "health.spike_threshold=6",
                                 "health.grad_norm_threshold=50", "optimizer.lr=0.01", "train.batch_size=16"}));
    test::CliResult r = tokamak(run, {"TOKAMAK_TRY_SPIKE_AT=25"});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY2(r.err.contains("TOKAMAK_TRY_SPIKE_AT: step 25 reads garbage tokens"), r.err.constData());
    QTRY_COMPARE(listener_.summaries.size(), before + 1);
    QVERIFY2(listener_.summaries.last().endsWith(": a loss spike"), qPrintable(listener_.summaries.last()));
    QVERIFY2(listener_.bodies.last().startsWith("step 25: ") && listener_.bodies.last().endsWith(": warned"),
             qPrintable(listener_.bodies.last()));
    r = tokamak(run, {"TOKAMAK_TRY_SPIKE_AT=25:x"});
    QVERIFY(r.code != 0);
    QVERIFY2(r.err.contains("TOKAMAK_TRY_SPIKE_AT='25:x' is not STEP or STEP:LENGTH"), r.err.constData());
    QVERIFY(!r.out.contains("step"));
  }

  // A run on an SSH host (real sshd on loopback; the host's session has no bus and no settings of its own) is told
  // here by `tokamak remote`, which follows it; attaching to it once it has ended tells nothing again.
  void aHostsRunIsToldOnThisComputer() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    test::SshHost host(env, {"XDG_CONFIG_HOME=" + QString::fromStdString(env.path("host-config"))});
    QVERIFY2(host.ok(), qPrintable(host.error()));
    test::NginxServer web;
    QVERIFY2(hookUp(web), qPrintable(web.error()));
    const qsizetype before = listener_.summaries.size();
    const QStringList ssh = host.sshd().cli_args() + QStringList{"--tokamak", test::tokamak_bin()};
    test::CliResult r = tokamak(QStringList{"remote", "train"} + ssh +
                                test::set_args(test::quiet_run_overrides(env.corpus_excerpt(20000), 3)));
    QVERIFY2(r.code == 0, r.err.constData());
    QTRY_COMPARE(listener_.summaries.size(), before + 1);
    QVERIFY2(listener_.summaries.last().endsWith(" finished"), qPrintable(listener_.summaries.last()));
    QTRY_COMPARE(web.webhookBodies().size(), 1);
    const QJsonObject hook = QJsonDocument::fromJson(web.webhookBodies().first().toUtf8()).object();
    QCOMPARE(hook["kind"].toString(), QString("finished"));
    const int at = r.err.indexOf("started run ") + 12;
    const QString uid = QString::fromUtf8(r.err.mid(at, 16));
    QCOMPARE(hook["run_uid"].toString(), uid);

    // The same run attached again: its journal is history, nothing is told twice.
    r = tokamak(QStringList{"remote", "attach"} + ssh + QStringList{uid});
    QVERIFY2(r.code == 0, r.err.constData());
    QVERIFY(r.out.contains("\"event\":\"end\""));
    QTest::qWait(500);
    QCOMPARE(listener_.summaries.size(), before + 1);
    QCOMPARE(web.webhookBodies().size(), 1);
    host.end_runs();
  }

  // `tokamak remote` sends the notices of a host's run from here: one that could not be sent is said once, in one line
  // with the webhook's host only, as the trainer says it (it was never said: the person learnt nothing of it).
  void aHostsRunSaysANoticeThatWasNotSent() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    test::SshHost host(env, {"XDG_CONFIG_HOME=" + QString::fromStdString(env.path("host-config"))});
    QVERIFY2(host.ok(), qPrintable(host.error()));
    NotifySettings s;
    s.desktop = false;
    s.webhook = "http://127.0.0.1:9/hook?token=SECRET";  // the discard port: nothing answers
    write_notify_settings(s);
    const QStringList ssh = host.sshd().cli_args() + QStringList{"--tokamak", test::tokamak_bin()};
    const test::CliResult r = tokamak(QStringList{"remote", "train"} + ssh +
                                      test::set_args(test::quiet_run_overrides(env.corpus_excerpt(20000), 3)));
    QVERIFY2(r.code == 0, r.err.constData());
    const QByteArray line = "tokamak remote: a notification was not sent: the webhook http://127.0.0.1:9/… was not reached";
    QVERIFY2(r.err.count(line) == 1, r.err.constData());
    QVERIFY2(!r.err.contains("SECRET") && !r.err.contains("/hook"), r.err.constData());
    host.end_runs();
  }

  // What goes wrong is said, never fatal to the run: a webhook nobody answers, a settings file that is not JSON.
  void failuresAreOneLineAndTheRunGoesOn() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    NotifySettings s;
    s.desktop = false;
    s.webhook = "http://127.0.0.1:9/hook?token=SECRET";  // the discard port: nothing answers
    write_notify_settings(s);
    test::CliResult r = train(env);
    QCOMPARE(r.code, 0);
    // The host is named, never the path or the query: for Slack, Discord and ntfy they are the secret.
    QVERIFY2(r.err.contains("tokamak: note: a notification was not sent: the webhook http://127.0.0.1:9/… was "
                            "not reached"),
             r.err.constData());
    QVERIFY2(!r.err.contains("SECRET") && !r.err.contains("/hook"), r.err.constData());
    write_file_atomically(notify_settings_path(), "{\"webhook\": 3}");
    r = train(env);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.err.contains("tokamak: warning: no notifications for this run: notification settings ") &&
                 r.err.contains("\"webhook\" must be a URL"),
             r.err.constData());
    // A title that is not UTF-8 (a Latin-1 run name) reaches the desktop repaired, where gdbus refused it before.
    qputenv("DBUS_SESSION_BUS_ADDRESS", address_.toUtf8());
    const qsizetype before = listener_.summaries.size();
    std::string said = "not yet";
    std::thread sender([&] { said = send_desktop({"finished", "caf\xe9 finished", "step \xff" "3", "", "", 3}); });
    QTRY_COMPARE_WITH_TIMEOUT(listener_.summaries.size(), before + 1, test::kPatienceMs);  // answered on this thread
    sender.join();
    QCOMPARE(said, std::string());
    QCOMPARE(listener_.summaries.last(), QString::fromUtf8("caf\xef\xbf\xbd finished"));
    // The sender says why a desktop cannot be told.
    qunsetenv("DBUS_SESSION_BUS_ADDRESS");
    QVERIFY(QString::fromStdString(send_desktop({"finished", "t", "b", "", "", 1})).contains("no session D-Bus"));
  }

  // A webhook that never answers (a socket that listens and never replies) holds nobody up: the sink posts and
  // returns while the send is still out, and the run's end waits its bounded time, then says what it gave up. A
  // redirect (nginx's 302) is no delivery.
  void aWebhookThatHangsOrMovesIsNoDelivery() {
    test::NginxServer web;
    web.addLocation("location = /moved { return 302 http://169.254.169.254/; }");
    QVERIFY2(web.start(), qPrintable(web.error()));
    const Notice notice{"finished", "run finished", "step 3", "", "", 3};
    const QString moved = QString::fromStdString(send_webhook(web.endpoint().toStdString() + "/moved", notice));
    QVERIFY2(moved.contains("answered HTTP 302 (a redirect, not followed"), qPrintable(moved));

    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    QVERIFY(listener >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    QCOMPARE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    QCOMPARE(::listen(listener, 8), 0);
    QCOMPARE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    NotifySettings s;
    s.desktop = false;
    s.webhook = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/hook?token=SECRET";
    NotifySink sink(s);
    sink.on_start(RunStart{});
    sink.on_spike(SpikeEvent{});
    QCOMPARE(sink.queue().pending(), size_t(1));  // returned with the send still out: a step never waits on it
    EndEvent end;
    end.status = "finished";
    sink.on_end(end);  // waits NoticeQueue::kEndWaitS, then gives up the spike in flight and the end
    const QString why = QString::fromStdString(sink.last_failure());
    QVERIFY2(why.startsWith("2 notices were still being sent when the run ended"), qPrintable(why));
    QVERIFY(!why.contains("SECRET"));
    QCOMPARE(sink.queue().pending(), size_t(0));
    ::close(listener);
  }
};

QTEST_GUILESS_MAIN(TestNotify)
#include "test_notify.moc"
