// Journal lines → events (see journal_events.h). The field names are printer.cpp's.
#include "engine/core/run/journal_events.h"

#include <nlohmann/json.hpp>

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

// Step and eval lines are flat: the axes, then every metric under its own key (printer.cpp, flat_event).
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
    s.torch_version = get<std::string>(j, "torch_version", "");
    s.cuda_version = get<std::string>(j, "cuda_version", ""), s.host = get<std::string>(j, "host", "");
    s.start_step = get<int64_t>(j, "start_step", 0), s.total_steps = get<int64_t>(j, "steps", 0);
    s.tokens_per_step = get<int64_t>(j, "tokens_per_step", 0);
    s.peak_flops = get<double>(j, "peak_flops", -1), s.peak_source = get<std::string>(j, "peak_source", "");
    sink.on_start(s);
  } else if (event == "step" || event == "eval") {
    const int64_t tokens = get<int64_t>(j, "tokens", 0);
    const double wall = get<double>(j, "wall_s", 0);
    if (event == "step") sink.on_step({step, tokens, wall, flat_metrics(j)});
    else sink.on_eval({step, tokens, wall, flat_metrics(j)});
  } else if (event == "skip") {
    sink.on_skip(
        {step, get<std::string>(j, "reason", ""), get<int64_t>(j, "in_a_row", 0), get<int64_t>(j, "total", 0)});
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
