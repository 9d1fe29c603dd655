// See health.h.
#include "engine/torch/train/health.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "engine/base/util/error.h"

namespace tokamak {

SpikeWatch::SpikeWatch(const HealthConfig& h)
    : action_(require_implemented(spike_action_choices(), "health.spike_action", h.spike_action)),
      max_spikes_(h.max_spikes), lr_steps_(h.rollback_lr_steps), lr_scale_(h.rollback_lr_scale),
      detector_(h.spike_window, h.spike_threshold, h.grad_norm_threshold) {}

SpikeVerdict SpikeWatch::look(double loss, double grad_norm) {
  const SpikeVerdict v = detector_.check(loss, grad_norm);
  if (v.spike) ++total_;
  if (!v.spike || action_ == SpikeAction::kWarn) detector_.accept(loss, grad_norm);
  return v;
}

SpikeEvent SpikeWatch::event(int64_t step, int64_t tokens, double wall_s, const SpikeVerdict& v,
                             const std::string& action) const {
  SpikeEvent e;
  e.step = step, e.tokens = tokens, e.wall_s = wall_s, e.signal = v.signal, e.value = v.value, e.median = v.median, e.limit = v.limit;
  e.action = action, e.total = total_, e.layer = v.layer, e.layer_jump = v.layer_jump;
  if (total_ > max_spikes_) {
    char what[160];
    std::snprintf(what, sizeof what, "%s %.4g against a median of %.4g", v.signal == "loss" ? "loss" : "gradient norm",
                  v.value, v.median);
    throw Error("the run keeps spiking: " + std::to_string(total_) + " spikes by step " + std::to_string(step) +
                    " (the last: " + what + ")",
                "lower optimizer.lr or raise optimizer.warmup, look at the data near this step, or raise "
                "health.max_spikes");
  }
  return e;
}

void SpikeWatch::rolled_back(int64_t step, int64_t to_step, const std::string& checkpoint_state) {
  data_offset_ += step - to_step;
  lr_low_until_ = to_step + lr_steps_;
  if (checkpoint_state.empty()) return;
  const nlohmann::json j = nlohmann::json::parse(checkpoint_state, nullptr, false);
  if (j.is_object() && j.contains("window")) detector_.load_state_json(j["window"].dump());
}

std::string SpikeWatch::state_json() const {
  return nlohmann::json{{"spikes", total_},
                        {"data_offset", data_offset_},
                        {"lr_low_until", lr_low_until_},
                        {"window", nlohmann::json::parse(detector_.state_json())}}
      .dump();
}

void SpikeWatch::load_state_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("window"))
    throw Error("checkpoint: its health state is not readable JSON", "resume from another checkpoint of the run");
  total_ = j.value("spikes", int64_t{0});
  data_offset_ = j.value("data_offset", int64_t{0});
  lr_low_until_ = j.value("lr_low_until", int64_t{0});
  detector_.load_state_json(j["window"].dump());
}

}  // namespace tokamak
