// Events ⇄ journal lines (see journal_events.h).
#include "engine/base/run/journal_events.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace tokamak {
namespace {

using json = nlohmann::json;

template <typename T>
T get(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

json flat_event(const char* event, int64_t step, int64_t tokens, double wall_s, const Metrics& metrics) {
  json j = {{"event", event}, {"step", step}, {"tokens", tokens}, {"wall_s", wall_s}};
  for (const MetricValue& v : metrics) {
    if (v.integer) j[v.key] = static_cast<int64_t>(std::llround(v.value));
    else j[v.key] = v.value;
  }
  return j;
}

// Step and eval lines are flat: the axes, then every metric under its own key (flat_event).
Metrics flat_metrics(const json& j) {
  Metrics m;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "event" || k == "step" || k == "tokens" || k == "wall_s" || !it->is_number()) continue;
    m.add({k, it->get<double>(), it->is_number_integer() || it->is_number_unsigned()});
  }
  return m;
}

}  // namespace

json event_json(const RunStart& e) {
  return {{"event", "start"},
          {"run_uid", e.run_uid},
          {"name", e.name},
          {"n_params", e.n_params},
          {"device", e.device},
          {"world_size", e.world_size},
          {"start_step", e.start_step},
          {"steps", e.total_steps},
          // What the run store keeps of a run, so a journal read elsewhere records the same row.
          {"dataset", e.dataset},
          {"model", e.model},
          {"gpu_name", e.gpu_name},
          {"host", e.host},
          {"tokamak_version", e.tokamak_version},
          {"torch_version", e.torch_version},
          {"cuda_version", e.cuda_version},
          {"tokens_per_step", e.tokens_per_step},
          {"peak_flops", e.peak_flops},
          {"peak_source", e.peak_source},
          {"memory_bytes_per_s", e.memory_bytes_per_s},
          {"memory_source", e.memory_source},
          {"config", json::parse(e.config_json)}};
}

json event_json(const StepEvent& e) { return flat_event("step", e.step, e.tokens, e.wall_s, e.metrics); }

json event_json(const EvalEvent& e) { return flat_event("eval", e.step, e.tokens, e.wall_s, e.metrics); }

json event_json(const SkipEvent& e) {
  return {{"event", "skip"}, {"step", e.step}, {"reason", e.reason}, {"in_a_row", e.in_a_row}, {"total", e.total}};
}

json event_json(const SpikeEvent& e) {
  json j = {{"event", "spike"}, {"step", e.step}, {"tokens", e.tokens}, {"wall_s", e.wall_s},     {"signal", e.signal}, {"value", e.value},
            {"median", e.median}, {"limit", e.limit}, {"action", e.action}, {"total", e.total}};
  if (e.action == "rolled back") j["to_step"] = e.to_step, j["data_skipped"] = e.data_skipped;
  if (!e.layer.empty()) j["layer"] = e.layer, j["layer_jump"] = e.layer_jump;
  return j;
}

json event_json(const AlertEvent& e) { return {{"event", e.kind}, {"step", e.step}, {"message", e.message}}; }

json event_json(const SampleEvent& e) {
  return {{"event", "sample"}, {"step", e.step}, {"prompt", e.prompt}, {"text", e.text}};
}

json event_json(const CheckpointEvent& e) { return {{"event", "checkpoint"}, {"step", e.step}, {"path", e.path}}; }

json event_json(const EndEvent& e) {
  return {{"event", "end"},     {"status", e.status}, {"step", e.step},
          {"tokens", e.tokens}, {"wall_s", e.wall_s}, {"error", e.error}};
}

json event_json(const ProgressEvent& e) {
  return {{"event", "progress"}, {"what", e.what}, {"done", e.done}, {"total", e.total}};
}

json event_json(const WarningEvent& e) { return {{"event", "warning"}, {"message", e.message}}; }

std::string dispatch_journal_line(const std::string& line, EventSink& sink) {
  json j = json::parse(line, nullptr, false);
  if (!j.is_object()) return {};
  const std::string event = get<std::string>(j, "event", "");
  const int64_t step = get<int64_t>(j, "step", 0);
  if (event == "start") {
    RunStart s;
    s.run_uid = get<std::string>(j, "run_uid", ""), s.name = get<std::string>(j, "name", "");
    auto config = j.find("config");
    s.config_json = config == j.end() ? "" : config->dump();
    s.dataset = get<std::string>(j, "dataset", ""), s.model = get<std::string>(j, "model", "");
    s.n_params = get<int64_t>(j, "n_params", 0), s.device = get<std::string>(j, "device", "");
    s.gpu_name = get<std::string>(j, "gpu_name", ""), s.world_size = get<int>(j, "world_size", 1);
    s.tokamak_version = get<std::string>(j, "tokamak_version", "");
    s.torch_version = get<std::string>(j, "torch_version", "");
    s.cuda_version = get<std::string>(j, "cuda_version", ""), s.host = get<std::string>(j, "host", "");
    s.start_step = get<int64_t>(j, "start_step", 0), s.total_steps = get<int64_t>(j, "steps", 0);
    s.tokens_per_step = get<int64_t>(j, "tokens_per_step", 0);
    s.peak_flops = get<double>(j, "peak_flops", -1), s.peak_source = get<std::string>(j, "peak_source", "");
    s.memory_bytes_per_s = get<double>(j, "memory_bytes_per_s", -1);
    s.memory_source = get<std::string>(j, "memory_source", "");
    sink.on_start(s);
  } else if (event == "step" || event == "eval") {
    const int64_t tokens = get<int64_t>(j, "tokens", 0);
    const double wall = get<double>(j, "wall_s", 0);
    if (event == "step") sink.on_step({step, tokens, wall, flat_metrics(j)});
    else sink.on_eval({step, tokens, wall, flat_metrics(j)});
  } else if (event == "skip") {
    sink.on_skip(
        {step, get<std::string>(j, "reason", ""), get<int64_t>(j, "in_a_row", 0), get<int64_t>(j, "total", 0)});
  } else if (event == "spike") {
    sink.on_spike({step, get<int64_t>(j, "tokens", 0), get<double>(j, "wall_s", 0), get<std::string>(j, "signal", ""), get<double>(j, "value", 0), get<double>(j, "median", 0),
                   get<double>(j, "limit", 0), get<std::string>(j, "action", ""), get<int64_t>(j, "to_step", 0),
                   get<int64_t>(j, "data_skipped", 0), get<int64_t>(j, "total", 0), get<std::string>(j, "layer", ""),
                   get<double>(j, "layer_jump", 0)});
  } else if (event == "slowdown" || event == "stalled" || event == "stall_over") {
    sink.on_alert({event, step, get<std::string>(j, "message", "")});
  } else if (event == "sample") {
    sink.on_sample({step, get<std::string>(j, "prompt", ""), get<std::string>(j, "text", "")});
  } else if (event == "checkpoint") {
    sink.on_checkpoint({step, get<std::string>(j, "path", "")});
  } else if (event == "end") {
    sink.on_end({get<std::string>(j, "status", "failed"), get<std::string>(j, "error", ""), step,
                 get<int64_t>(j, "tokens", 0), get<double>(j, "wall_s", 0)});
  } else if (event == "progress") {
    sink.on_progress({get<std::string>(j, "what", ""), get<uint64_t>(j, "done", 0), get<uint64_t>(j, "total", 0)});
  } else if (event == "warning") {
    sink.on_warning({get<std::string>(j, "message", "")});
  }
  return event;
}

}  // namespace tokamak
