// BatchFinder: doubling search for the largest batch that trains (see batch_finder.h).
#include "ui/device/batch_finder.h"

#include <QPointer>
#include <QTemporaryDir>
#include <QThread>

#include "engine/train/trainer.h"

namespace tokamak::ui {

BatchFinder::~BatchFinder() {
  if (thread_) {
    *cancel_ = true;
    thread_->wait();
  }
}

void BatchFinder::start(const Config& base) {
  if (thread_) return;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  cancel_ = cancel;
  QPointer<BatchFinder> self(this);
  thread_ = QThread::create([self, base, cancel] {
    QTemporaryDir scratch;  // the tries' end-of-run checkpoints go here and vanish
    int64_t largest = 0;
    QString error;
    for (int64_t b = 1; b <= 4096 && !cancel->load(); b *= 2) {
      Config c = base;
      c.train.batch_size = b;
      c.train.steps = 2, c.train.warmup_steps = 0, c.train.log_every = 1;
      c.train.eval_every = 0, c.train.eval_batches = 1, c.train.sample_every = -1;
      c.train.resume.clear();
      c.train.checkpoint_dir = scratch.path().toStdString();
      c.name = "find-largest-batch";
      EventSink quiet;
      EndEvent end;
      try {
        end = train(c, quiet, nullptr);
      } catch (const std::exception& e) {
        end.status = "failed", end.error = e.what();
      }
      const bool fits = end.status == "finished";
      QMetaObject::invokeMethod(
          self,
          [self, b, fits] {
            if (self) Q_EMIT self->tried(b, fits);
          },
          Qt::QueuedConnection);
      if (!fits) {
        if (QString::fromStdString(end.error).contains("out of memory", Qt::CaseInsensitive)) break;
        error = QString::fromStdString(end.error);
        break;
      }
      largest = b;
    }
    QMetaObject::invokeMethod(
        self,
        [self, largest, error] {
          if (!self) return;
          self->thread_ = nullptr;
          Q_EMIT self->finished(largest, error);
        },
        Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
  thread_->start();
}

void BatchFinder::cancel() {
  if (cancel_) *cancel_ = true;
}

}  // namespace tokamak::ui
