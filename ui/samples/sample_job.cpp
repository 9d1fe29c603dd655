// SampleJob: engine/generate's generate_from_checkpoint() on a background thread (see sample_job.h). Its
// LibTorch headers come before any Qt header.
#include "engine/generate/generate.h"
#include "engine/train/torch_error.h"

#include "ui/samples/sample_job.h"

#include <QPointer>
#include <QThread>

namespace tokamak::ui {

QString generateFromCheckpoint(const SampleRequest& r, qint64* step) {
  SampleOptions so;
  so.max_new_tokens = r.tokens, so.temperature = r.temperature, so.top_k = r.topK, so.seed = r.seed;
  so.stop_at_end_of_text = false;
  // On the CPU: it works wherever the checkpoint came from, and leaves a training GPU alone.
  Generation g = generate_from_checkpoint(r.checkpoint.toStdString(), r.prompt.toStdString(), so, "cpu");
  if (step) *step = g.step;
  return QString::fromStdString(g.text);
}

SampleJob::~SampleJob() {
  if (thread_) thread_->wait();
}

bool SampleJob::start(const SampleRequest& request) {
  if (thread_) return false;
  QPointer<SampleJob> self(this);
  thread_ = QThread::create([self, request] {
    qint64 step = 0;
    QString text, error;
    try {
      text = generateFromCheckpoint(request, &step);
    } catch (const std::exception& e) {
      error = QString::fromStdString(tokamak::torch_error_text(e));  // one line, no LibTorch backtrace
    }
    QMetaObject::invokeMethod(self, [self, step, text, error] {
      if (!self) return;
      self->thread_ = nullptr;
      Q_EMIT self->finished(step, text, error);
    }, Qt::QueuedConnection);
  });
  connect(thread_, &QThread::finished, thread_, &QObject::deleteLater);
  thread_->start();
  return true;
}

}  // namespace tokamak::ui
