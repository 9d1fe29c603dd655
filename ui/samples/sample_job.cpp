// SampleJob: generate() from a checkpoint on a background thread (see sample_job.h). The one ui/ file that
// needs LibTorch's model headers; they come before any Qt header.
#include "engine/config/choices.h"
#include "engine/config/config.h"
#include "engine/data/bpe_utf8.h"
#include "engine/data/tokenizer.h"
#include "engine/generate/sampler.h"
#include "engine/model/gpt.h"
#include "engine/train/checkpoint.h"
#include "engine/train/device.h"
#include "engine/train/torch_error.h"

#include "ui/samples/sample_job.h"

#include <QPointer>
#include <QThread>

namespace tokamak::ui {

QString generateFromCheckpoint(const SampleRequest& r, qint64* step) {
  const std::string path = r.checkpoint.toStdString();
  CheckpointInfo info = read_checkpoint_info(path);
  Config c = config_from_json(info.config_json);
  // Sampling needs none of the training switches; fp32 on the CPU works wherever the checkpoint came from.
  c.device = "cpu";
  c.opt.precision = "fp32";
  c.opt.layers = portable_layers(c.opt.layers);
  c.opt.pin_memory = "false", c.opt.cuda_graphs = false, c.dist.gpus = 1;
  c10::Device device = parse_device(c.device);
  GPT model(GPTOptions::from_config(c.model, c.opt));
  load_checkpoint(path, *model, nullptr, /*restore_rng=*/false, device);
  const Tokenizer& tok = Tokenizer::gpt2();
  SampleOptions so;
  so.max_new_tokens = r.tokens, so.temperature = r.temperature, so.top_k = r.topK, so.seed = r.seed;
  so.stop_at_end_of_text = false;
  const std::string prompt = r.prompt.toStdString();
  std::string raw = prompt + tok.decode(generate(*model, tok.encode(prompt), so, device)), fixed;
  if (step) *step = info.step;
  // The last token may end inside a UTF-8 character.
  return QString::fromStdString(std::string(bpe::sanitize_utf8(raw, fixed, nullptr)));
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
