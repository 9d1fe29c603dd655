// SampleProcess: `tokamak-engine generate` in a child (see sample_process.h).
#include "ui/live/sample_process.h"

#include "ui/live/engine_job.h"

namespace tokamak::ui {

SampleProcess::SampleProcess(QObject* parent) : QObject(parent), job_(new EngineJob(this)) {
  connect(job_, &EngineJob::finished, this, [this](QString text, const QString& error) {
    if (!error.isEmpty()) return Q_EMIT finished(step_, {}, error);
    if (text.endsWith('\n')) text.chop(1);
    Q_EMIT finished(step_, text, {});
  });
}

bool SampleProcess::isRunning() const { return job_->isRunning(); }

void SampleProcess::cancel() { job_->cancel(); }

bool SampleProcess::start(const SampleNowRequest& r) {
  if (job_->isRunning()) return false;
  step_ = r.step;
  // Sampling needs none of the training switches; fp32 on the CPU works wherever the checkpoint came from.
  return job_->start({"generate", "--checkpoint", r.checkpoint, "--prompt", r.prompt, "--tokens",
                      QString::number(r.tokens), "--temperature", QString::number(r.temperature), "--top-k",
                      QString::number(r.topK), "--seed", QString::number(r.seed), "--device", "cpu"});
}

}  // namespace tokamak::ui
