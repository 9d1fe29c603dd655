// StudioNotices: the notices the studio sends itself (a local run's stall, which its own process cannot see),
// through one bounded NoticeQueue on a thread of its own, as notifications.json says when each leaves. A notice that
// could not be sent is said once, in one line (the webhook's URL redacted, as send_webhook words it), as the CLI's
// trainer says it: the window shows it in the status bar and the run's read-out.
#pragma once
#include <QObject>
#include <QString>
#include <memory>

#include "engine/fleet/notify/notify.h"

namespace tokamak {
class NoticeQueue;
}

namespace tokamak::ui {

class StudioNotices : public QObject {
  Q_OBJECT
 public:
  explicit StudioNotices(QObject* parent = nullptr);
  ~StudioNotices() override;  // gives up what is still queued (its thread ends first)
  // Never waits for a send; a full queue drops the notice (NoticeQueue's bound).
  void post(const Notice& n);

 Q_SIGNALS:
  // Why a notice was not sent, in one line ("the webhook https://hooks.slack.com/… was not reached: …"), once per
  // failed notice.
  void notSent(const QString& why);

 private:
  std::unique_ptr<NoticeQueue> queue_;
};

}  // namespace tokamak::ui
