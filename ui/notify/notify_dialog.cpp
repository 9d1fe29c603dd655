// NotifyDialog (see notify_dialog.h).
#include "ui/notify/notify_dialog.h"

#include <QCheckBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QThreadPool>
#include <QVBoxLayout>

#include "engine/fleet/notify/notify.h"

namespace tokamak::ui {

NotifyDialog::NotifyDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Notifications"));
  setObjectName("notifyDialog");
  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  desktop_ = new QCheckBox(tr("Desktop notifications (this computer's session)"));
  webhook_ = new QLineEdit;
  webhook_->setPlaceholderText(tr("https://ntfy.sh/my-topic, a Slack incoming webhook… (empty: none)"));
  webhook_->setToolTip(tr("Each notification is POSTed here as JSON: text, title, message, kind, run_uid, "
                          "run_name, step"));
  form->addRow(desktop_);
  form->addRow(tr("Webhook"), webhook_);
  layout->addLayout(form);
  auto* when = new QGroupBox(tr("Tell me when a run…"));
  auto* grid = new QVBoxLayout(when);
  const QMap<QString, QString> labels = {{"finished", tr("finishes")},
                                         {"failed", tr("fails")},
                                         {"stopped", tr("is stopped")},
                                         {"target", tr("reaches its target loss")},
                                         {"spike", tr("has a loss spike")},
                                         {"slowdown", tr("slows down")},
                                         {"stalled", tr("stalls (seen while the studio follows it)")}};
  for (const std::string& k : notify_kinds()) {
    const QString kind = QString::fromStdString(k);
    auto* box = new QCheckBox(labels.value(kind, kind));
    kinds_.insert(kind, box);
    grid->addWidget(box);
  }
  layout->addWidget(when);
  test_ = new QPushButton(tr("Send a test"));
  result_ = new QLabel;
  result_->setObjectName("notifyResult");
  result_->setWordWrap(true);
  auto* row = new QHBoxLayout;
  row->addWidget(test_);
  row->addWidget(result_, 1);
  layout->addLayout(row);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
  layout->addWidget(buttons);
  connect(test_, &QPushButton::clicked, this, &NotifyDialog::sendTest);
  connect(buttons, &QDialogButtonBox::accepted, this, [this] {
    if (save()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  load();
}

void NotifyDialog::load() {
  NotifySettings s;
  try {
    s = read_notify_settings();
  } catch (const std::exception& e) {
    result_->setText(QString::fromUtf8(e.what()));  // the defaults are shown; saving replaces the file
  }
  desktop_->setChecked(s.desktop);
  webhook_->setText(QString::fromStdString(s.webhook));
  for (auto it = kinds_.begin(); it != kinds_.end(); ++it) it.value()->setChecked(!s.off.count(it.key().toStdString()));
}

static NotifySettings settingsOf(bool desktop, const QString& webhook, const QMap<QString, QCheckBox*>& kinds) {
  NotifySettings s;
  s.desktop = desktop;
  s.webhook = webhook.trimmed().toStdString();
  for (auto it = kinds.begin(); it != kinds.end(); ++it)
    if (!it.value()->isChecked()) s.off.insert(it.key().toStdString());
  return s;
}

bool NotifyDialog::save() {
  const QString url = webhook_->text().trimmed();
  // The one rule the engine sends by (the text it shows never repeats the URL: it may be the secret).
  if (const std::string why = url.isEmpty() ? "" : webhook_problem(url.toStdString()); !why.empty()) {
    result_->setText(tr("The webhook: %1").arg(QString::fromStdString(why)));
    return false;
  }
  try {
    write_notify_settings(settingsOf(desktop_->isChecked(), url, kinds_));
  } catch (const std::exception& e) {
    result_->setText(QString::fromUtf8(e.what()));
    return false;
  }
  return true;
}

void NotifyDialog::sendTest() {
  const NotifySettings s = settingsOf(desktop_->isChecked(), webhook_->text().trimmed(), kinds_);
  test_->setEnabled(false);
  result_->setText(tr("sending…"));
  QPointer<NotifyDialog> self(this);
  // Up to five seconds for the desktop and ten for the webhook: off the GUI thread. send_webhook checks the URL
  // by the same rule as save(), so a typed file:// is refused here too.
  QThreadPool::globalInstance()->start([self, s] {
    Notice n{"test", "Tokamak: a test", "Notifications reach you here.", "", "", 0};
    QStringList said;
    try {  // a pool thread that throws ends the studio: whatever goes wrong is said in the dialog instead
      if (s.desktop) {
        const std::string why = send_desktop(n);
        said << (why.empty() ? tr("desktop: sent") : tr("desktop: %1").arg(QString::fromStdString(why)));
      }
      if (!s.webhook.empty()) {
        const std::string why = send_webhook(s.webhook, n);
        said << (why.empty() ? tr("webhook: sent") : tr("webhook: %1").arg(QString::fromStdString(why)));
      }
    } catch (const std::exception& e) {
      said << tr("not sent: %1").arg(QString::fromUtf8(e.what()));
    } catch (...) {
      said << tr("not sent: an unknown error");
    }
    if (said.isEmpty()) said << tr("nothing to send to: turn the desktop on or give a webhook");
    const QString outcome = said.join("; ");
    QMetaObject::invokeMethod(qApp, [self, outcome] {
      if (!self) return;
      self->result_->setText(outcome);
      self->test_->setEnabled(true);
      Q_EMIT self->testDone(outcome);
    });
  });
}

QString NotifyDialog::result() const { return result_->text(); }

}  // namespace tokamak::ui
