// SampleProcess: `tokamak-engine generate` in a child (see sample_process.h).
#include "ui/live/sample_process.h"

#include "ui/common/child_process.h"

namespace tokamak::ui {

SampleProcess::SampleProcess(QObject* parent) : QObject(parent), job_(new ChildProcess(this)) {
  job_->setKeepOutput(true);
  job_->setReadJson(false);
  connect(job_, &ChildProcess::finished, this, [this](const QString& error) {
    if (!error.isEmpty()) return Q_EMIT finished(step_, {}, error);
    QString text = QString::fromUtf8(job_->output());
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
  return job_->startEngine({"generate", "--checkpoint", r.checkpoint, "--prompt", r.prompt, "--tokens",
                            QString::number(r.tokens), "--temperature", QString::number(r.temperature), "--top-k",
                            QString::number(r.topK), "--seed", QString::number(r.seed), "--device", "cpu"});
}

}  // namespace tokamak::ui
