// File ▸ Notifications…: "Send a test" reaches a real webhook (nginx on loopback) and says so; a URL that is not
// one is refused in the dialog and nothing is written; Save writes the file every run reads. The studio's own notices
// say one that was not sent.
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "engine/fleet/notify/notify.h"
#include "tests/support/nginx_server.h"
#include "tests/support/scratch_env.h"
#include "ui/notify/notify_dialog.h"
#include "ui/notify/studio_notices.h"

using namespace tokamak;
using namespace tokamak::ui;

class TestStudioNotify : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void sendATestThenSave() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    test::NginxServer web;
    web.addWebhook("hook");
    QVERIFY2(web.start(), qPrintable(web.error()));
    qunsetenv("DBUS_SESSION_BUS_ADDRESS");

    NotifyDialog dialog;
    dialog.show();
    dialog.webhookEdit()->setText(web.endpoint() + "/hook");
    QSignalSpy done(&dialog, &NotifyDialog::testDone);
    dialog.testButton()->click();
    QVERIFY(done.wait(30000));
    // The desktop box is on by default: with no session bus here, it says so beside the webhook's success.
    QVERIFY2(dialog.result().contains("webhook: sent") && dialog.result().contains("no session D-Bus"),
             qPrintable(dialog.result()));
    QTRY_COMPARE(web.webhookBodies().size(), 1);  // nginx logs the body after it answers
    QCOMPARE(QJsonDocument::fromJson(web.webhookBodies().first().toUtf8()).object()["kind"].toString(),
             QString("test"));

    // A URL that is not one: refused, nothing written.
    auto* buttons = dialog.findChild<QDialogButtonBox*>();
    dialog.webhookEdit()->setText("ntfy.sh/topic");
    buttons->button(QDialogButtonBox::Save)->click();
    QVERIFY(dialog.isVisible());
    QVERIFY2(dialog.result().contains("only http:// and https:// URLs"), qPrintable(dialog.result()));
    // The dialog's test goes by the same rule: a file:// URL is never read.
    dialog.webhookEdit()->setText("file:///etc/hostname");
    buttons->button(QDialogButtonBox::Save)->click();
    QVERIFY2(dialog.result().contains("only http:// and https:// URLs") && dialog.result().contains("'file://'"),
             qPrintable(dialog.result()));
    QVERIFY(!QFile::exists(QString::fromStdString(notify_settings_path())));
    QVERIFY(!QFile::exists(QString::fromStdString(notify_settings_path())));

    // Saved: the file says what the dialog showed, and a new dialog shows it again.
    dialog.webhookEdit()->setText(web.endpoint() + "/hook");
    for (QCheckBox* box : dialog.findChildren<QCheckBox*>())
      if (box->text() == "is stopped") box->setChecked(false);
    buttons->button(QDialogButtonBox::Save)->click();
    QVERIFY(!dialog.isVisible());
    const NotifySettings s = read_notify_settings();
    QCOMPARE(QString::fromStdString(s.webhook), web.endpoint() + "/hook");
    QVERIFY(s.desktop);
    QCOMPARE(s.off, std::set<std::string>{"stopped"});
    NotifyDialog again;
    QCOMPARE(again.webhookEdit()->text(), web.endpoint() + "/hook");
  }

  // A notice the studio sends itself (a local run's stall) that does not go is said, once, in one line that names the
  // webhook's host and never its path or query; one that goes says nothing.
  void aNoticeThatWasNotSentIsSaidOnce() {
    test::ScratchEnv env;
    QVERIFY(env.ok());
    qunsetenv("DBUS_SESSION_BUS_ADDRESS");
    NotifySettings s;
    s.desktop = false;
    s.webhook = "http://127.0.0.1:9/hook?token=SECRET";  // the discard port: nothing answers
    write_notify_settings(s);
    StudioNotices notices;
    QSignalSpy notSent(&notices, &StudioNotices::notSent);
    notices.post({"stalled", "run: stalled", "no step for 5 minutes", "uid", "run", 12});
    QVERIFY(notSent.wait(30000));
    const QString why = notSent.first().first().toString();
    QVERIFY2(why.startsWith("the webhook http://127.0.0.1:9/… was not reached") && !why.contains('\n') &&
                 !why.contains("SECRET") && !why.contains("/hook"),
             qPrintable(why));
    QTest::qWait(200);
    QCOMPARE(notSent.size(), 1);

    test::NginxServer web;
    web.addWebhook("hook");
    QVERIFY2(web.start(), qPrintable(web.error()));
    s.webhook = web.endpoint().toStdString() + "/hook";
    write_notify_settings(s);  // read at each send: no restart
    notices.post({"stalled", "run: stalled", "no step for 5 minutes", "uid", "run", 13});
    QTRY_COMPARE(web.webhookBodies().size(), 1);
    QTest::qWait(200);
    QCOMPARE(notSent.size(), 1);
  }
};

QTEST_MAIN(TestStudioNotify)
#include "test_studio_notify.moc"
