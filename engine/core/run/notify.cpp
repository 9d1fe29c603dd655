// See notify.h.
#include "engine/core/run/notify.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "engine/core/util/error.h"
#include "engine/core/util/files.h"
#include "engine/core/util/process.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

double notice_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A GVariant text literal of S (gdbus parses every argument as one).
std::string gvariant_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "'";
}

std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

const std::vector<std::string>& notify_kinds() {
  static const std::vector<std::string> kinds = {"finished", "failed",  "stopped", "target",
                                                 "spike",    "slowdown", "stalled"};
  return kinds;
}

std::string notify_settings_path() { return config_dir() + "/notifications.json"; }

NotifySettings read_notify_settings() {
  NotifySettings s;
  const std::string path = notify_settings_path();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return s;
  const json j = json::parse(read_file(path), nullptr, false);
  const auto bad = [&](const std::string& what) {
    return Error("notification settings " + path + ": " + what,
                 "fix or delete the file (the studio's Settings ▸ Notifications writes it)");
  };
  if (!j.is_object()) throw bad("not a JSON object");
  if (j.contains("desktop") && !j["desktop"].is_boolean()) throw bad("\"desktop\" must be true or false");
  if (j.contains("webhook") && !j["webhook"].is_string()) throw bad("\"webhook\" must be a URL or \"\"");
  s.desktop = j.value("desktop", true);
  s.webhook = j.value("webhook", "");
  if (!s.webhook.empty() && s.webhook.rfind("http://", 0) != 0 && s.webhook.rfind("https://", 0) != 0)
    throw bad("\"webhook\" '" + s.webhook + "' is not an http:// or https:// URL");
  if (j.contains("off")) {
    if (!j["off"].is_array()) throw bad("\"off\" must be a list of kinds");
    for (const json& k : j["off"]) {
      const std::string kind = k.is_string() ? k.get<std::string>() : "";
      bool known = false;
      for (const std::string& n : notify_kinds()) known = known || n == kind;
      if (!known) throw bad("\"off\" names '" + k.dump() + "', not one of finished, failed, stopped, target, spike, "
                            "slowdown, stalled");
      s.off.insert(kind);
    }
  }
  return s;
}

void write_notify_settings(const NotifySettings& s) {
  const std::string path = notify_settings_path();
  make_dirs(path.substr(0, path.rfind('/')));
  write_file_atomically(path, json{{"desktop", s.desktop}, {"webhook", s.webhook}, {"off", s.off}}.dump(2) + "\n");
}

std::string send_desktop(const Notice& n) {
  if (!std::getenv("DBUS_SESSION_BUS_ADDRESS")) return "no session D-Bus here (DBUS_SESSION_BUS_ADDRESS is unset)";
  // The freedesktop interface: Notify(app_name, replaces_id, icon, summary, body, actions, hints, timeout).
  ProcessResult r;
  try {
    r = run_process({"gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path",
                     "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.Notify",
                     "'Tokamak'", "uint32 0", "''", gvariant_string(n.title), gvariant_string(n.body), "@as []",
                     "@a{sv} {}", "int32 -1"},
                    {}, 10);
  } catch (const std::exception& e) {
    return std::string("gdbus could not be started (Debian: libglib2.0-bin): ") + e.what();
  }
  if (r.code == 0) return "";
  return "the desktop's notification service did not take it: " + one_line(r.err.empty() ? r.out : r.err);
}

std::string send_webhook(const std::string& url, const Notice& n) {
  const std::string body = json{{"text", n.title + ": " + n.body},
                                {"title", n.title},
                                {"message", n.body},
                                {"kind", n.kind},
                                {"run_uid", n.run_uid},
                                {"run_name", n.run_name},
                                {"step", n.step}}
                               .dump();
  CURL* curl = curl_easy_init();
  if (!curl) return "libcurl could not start";
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return "the webhook " + url + " was not reached: " + (*error ? error : curl_easy_strerror(rc));
  if (status >= 400) return "the webhook " + url + " answered HTTP " + std::to_string(status);
  return "";
}

std::string send_notice(const NotifySettings& s, const Notice& n) {
  if (s.off.count(n.kind)) return "";
  std::string failures;
  const auto note = [&](const std::string& why) {
    if (!why.empty()) failures += (failures.empty() ? "" : "; ") + why;
  };
  if (s.desktop && std::getenv("DBUS_SESSION_BUS_ADDRESS")) note(send_desktop(n));  // a server has no desktop
  if (!s.webhook.empty()) note(send_webhook(s.webhook, n));
  return failures;
}

void NotifySink::send(const std::string& kind, int64_t step, const std::string& title, const std::string& body) {
  if (muted_) return;
  const double t = notice_clock_s();
  auto last = last_sent_.find(kind);
  if (last != last_sent_.end() && t - last->second < 60 && kind != "finished" && kind != "failed") return;
  last_sent_[kind] = t;
  const std::string why = send_notice(settings_, {kind, title, body, uid_, name_, step});
  if (!why.empty()) failure_ = why;
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
  char body[200];
  std::snprintf(body, sizeof body, "step %lld: %s %.4g against a median of %.4g: %s", static_cast<long long>(e.step),
                e.signal == "loss" ? "loss" : "gradient norm", e.value, e.median, e.action.c_str());
  send("spike", e.step, name_ + ": a loss spike", body);
}

void NotifySink::on_alert(const AlertEvent& e) {
  if (e.kind == "slowdown" || e.kind == "stalled") send(e.kind, e.step, name_ + ": " + e.kind, e.message);
}

void NotifySink::on_end(const EndEvent& e) {
  const std::string body = "step " + std::to_string(e.step) + (e.error.empty() ? "" : ": " + e.error);
  send(e.status == "finished" ? "finished" : e.status == "stopped" ? "stopped" : "failed", e.step,
       name_ + " " + e.status, body);
}

}  // namespace tokamak
