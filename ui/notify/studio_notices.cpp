// The studio's own notices (see studio_notices.h).
#include "ui/notify/studio_notices.h"

#include <QMetaObject>
#include <QPointer>

#include "engine/fleet/notify/notice_queue.h"

namespace tokamak::ui {

StudioNotices::StudioNotices(QObject* parent) : QObject(parent) {
  QPointer<StudioNotices> self(this);
  // The settings are read at each send: File ▸ Notifications… takes effect without a restart, and a file that cannot
  // be read costs that notice only (the dialog says why).
  queue_ = std::make_unique<NoticeQueue>([self](const Notice& notice, const std::atomic<bool>& aborted) {
    std::string why;
    try {
      why = send_notice(read_notify_settings(), notice, &aborted);
    } catch (const std::exception& e) {
      why = e.what();
    }
    // The queue's thread ends in the destructor, before this object is gone: the queued call finds it, or nothing.
    const QString line = QString::fromStdString(why);
    if (!why.empty() && !aborted)
      QMetaObject::invokeMethod(self, [self, line] { if (self) Q_EMIT self->notSent(line); }, Qt::QueuedConnection);
    return why;
  });
}

StudioNotices::~StudioNotices() = default;

void StudioNotices::post(const Notice& n) { queue_->post(n); }

}  // namespace tokamak::ui
