// See notify_sink.h.
#include "engine/fleet/notify/notify_sink.h"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace tokamak {
namespace {

double notice_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

NotifySink::NotifySink(NotifySettings settings) : queue_(std::move(settings)) {}
NotifySink::NotifySink(NoticeQueue::Sender send, size_t capacity) : queue_(std::move(send), capacity) {}

void NotifySink::on_start(const RunStart& e) {
  uid_ = e.run_uid;
  name_ = e.name;
}

void NotifySink::send(const std::string& kind, int64_t step, const std::string& title, const std::string& body) {
  if (muted_) return;
  const double t = notice_clock_s();
  auto last = last_sent_.find(kind);
  if (last != last_sent_.end() && t - last->second < 60 && kind != "finished" && kind != "failed") return;
  last_sent_[kind] = t;
  queue_.post({kind, title, body, uid_, name_, step});
}

void NotifySink::on_eval(const EvalEvent& e) {
  const double s = e.metric("time_to_target_s");
  if (std::isnan(s)) return;
  char body[160];
  std::snprintf(body, sizeof body, "val loss %.4f at step %lld, after %.0f s of training", e.metric("val_loss"),
                static_cast<long long>(e.step), s);
  send("target", e.step, name_ + " reached its target", body);
}

void NotifySink::on_spike(const SpikeEvent& e) {
  char body[240];
  std::snprintf(body, sizeof body, "step %lld: %s %.4g against a median of %.4g%s%s: %s", static_cast<long long>(e.step),
                e.signal == "loss" ? "loss" : "gradient norm", e.value, e.median,
                e.layer.empty() ? "" : "; gradients jumped most in ", e.layer.substr(0, 40).c_str(), e.action.c_str());
  send("spike", e.step, name_ + ": a loss spike", body);
}

void NotifySink::on_alert(const AlertEvent& e) {
  if (e.kind == "slowdown" || e.kind == "stalled") send(e.kind, e.step, name_ + ": " + e.kind, e.message);
}

void NotifySink::on_end(const EndEvent& e) {
  const std::string body = "step " + std::to_string(e.step) + (e.error.empty() ? "" : ": " + e.error);
  send(e.status == "finished" ? "finished" : e.status == "stopped" ? "stopped" : "failed", e.step,
       name_ + " " + e.status, body);
  queue_.finish();
}

}  // namespace tokamak
