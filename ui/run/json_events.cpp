// One `--json` line → one EventSink call (see json_events.h).
#include "ui/run/json_events.h"

#include <QJsonDocument>
#include <QJsonObject>

#include "engine/train/events.h"

namespace tokamak::ui {
namespace {

std::string str(const QJsonObject& o, const char* key) { return o.value(key).toString().toStdString(); }
int64_t int64(const QJsonObject& o, const char* key) { return o.value(key).toInteger(); }

// Every numeric key of a step or eval line other than its axes is a metric: a new metric in the engine reaches
// the plots without a change here. null (e.g. mfu without a known peak) is "not measured" and left out.
template <class Event>
Event withMetrics(const QJsonObject& o) {
  Event e;
  e.step = int64(o, "step");
  e.tokens = int64(o, "tokens");
  e.wall_s = o.value("wall_s").toDouble();
  for (auto it = o.begin(); it != o.end(); ++it) {
    const QString key = it.key();
    if (key == "event" || key == "step" || key == "tokens" || key == "wall_s" || !it.value().isDouble()) continue;
    e.metrics.add(key.toStdString(), it.value().toDouble());
  }
  return e;
}

RunStart startOf(const QJsonObject& o) {
  RunStart s;
  s.run_uid = str(o, "run_uid");
  s.name = str(o, "name");
  s.n_params = int64(o, "n_params");
  s.device = str(o, "device");
  s.world_size = static_cast<int>(o.value("world_size").toInt(1));
  s.start_step = int64(o, "start_step");
  s.total_steps = int64(o, "steps");
  const QJsonObject config = o.value("config").toObject();
  s.config_json = QJsonDocument(config).toJson(QJsonDocument::Compact).toStdString();
  s.dataset = config.value("data").toObject().value("path").toString().toStdString();
  // Where and on what the run trains (a run on an SSH host shows its host).
  s.model = str(o, "model"), s.gpu_name = str(o, "gpu_name"), s.host = str(o, "host");
  s.torch_version = str(o, "torch_version"), s.cuda_version = str(o, "cuda_version");
  s.tokens_per_step = int64(o, "tokens_per_step");
  return s;
}

}  // namespace

bool dispatchJsonEvent(const QByteArray& line, EventSink& sink, QString* error) {
  QJsonParseError parse{};
  const QJsonDocument doc = QJsonDocument::fromJson(line, &parse);
  if (!doc.isObject()) {
    if (error) *error = parse.error != QJsonParseError::NoError ? parse.errorString() : QStringLiteral("not an object");
    return false;
  }
  const QJsonObject o = doc.object();
  const QString kind = o.value("event").toString();
  if (kind == "step") sink.on_step(withMetrics<StepEvent>(o));
  else if (kind == "start") sink.on_start(startOf(o));
  else if (kind == "eval") sink.on_eval(withMetrics<EvalEvent>(o));
  else if (kind == "sample") sink.on_sample({int64(o, "step"), str(o, "prompt"), str(o, "text")});
  else if (kind == "checkpoint") sink.on_checkpoint({int64(o, "step"), str(o, "path")});
  else if (kind == "progress")
    sink.on_progress(
        {str(o, "what"), static_cast<uint64_t>(int64(o, "done")), static_cast<uint64_t>(int64(o, "total"))});
  else if (kind == "end")
    sink.on_end(
        {str(o, "status"), str(o, "error"), int64(o, "step"), int64(o, "tokens"), o.value("wall_s").toDouble()});
  else if (kind.isEmpty()) {
    if (error) *error = QStringLiteral("no \"event\" key");
    return false;
  }
  return true;
}

}  // namespace tokamak::ui
