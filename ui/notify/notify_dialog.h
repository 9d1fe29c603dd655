// File ▸ Notifications…: what a run tells the person and where (engine/fleet/notify/notify.h) — the desktop, a
// webhook URL, each kind on or off — with "Send a test" that sends one through both and says what happened.
// Saving writes notifications.json, which runs started from the CLI and the queue's worker read too.
#pragma once
#include <QDialog>
#include <QMap>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace tokamak::ui {

class NotifyDialog : public QDialog {
  Q_OBJECT
 public:
  explicit NotifyDialog(QWidget* parent = nullptr);
  QString result() const;  // the last test's outcome, as shown
  QLineEdit* webhookEdit() const { return webhook_; }
  QPushButton* testButton() const { return test_; }

 Q_SIGNALS:
  void testDone(const QString& outcome);

 private:
  void load();
  bool save();  // false (and said) when the URL is not one
  void sendTest();

  QCheckBox* desktop_;
  QLineEdit* webhook_;
  QMap<QString, QCheckBox*> kinds_;
  QPushButton* test_;
  QLabel* result_;
};

}  // namespace tokamak::ui
