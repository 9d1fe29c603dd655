// See notify.h.
#include "engine/fleet/notify/notify.h"

#include <curl/curl.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "engine/base/util/process.h"
#include "engine/base/util/utf8.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

// A GVariant text literal of S (gdbus parses every argument as one).
std::string gvariant_string(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "'";
}

// The first line of S that says something.
std::string one_line(const std::string& s) {
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return "";
}

// PATH made the user's alone (group and others' bits dropped) when it is theirs: "", or why it could not be.
std::string make_private(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return "";
  if (st.st_uid != ::geteuid()) return "it belongs to another user";
  return ::chmod(path.c_str(), st.st_mode & 0700) == 0 ? "" : std::strerror(errno);
}

// A file written by hand (the docs show one) is 0644 under a usual umask, and its webhook is often the secret
// itself: made the user's alone when it is theirs, else said once (a warning: the notices still go). Its folder
// too, when it is the user's: an editor's backup or swap file beside it (notifications.json~) is made 0644 again.
void keep_private(const std::string& path) {
  const std::string why = make_private(path);
  const std::string folder = std::filesystem::path(path).parent_path().string();
  struct stat st {};
  if (!folder.empty() && ::stat(folder.c_str(), &st) == 0 && st.st_uid == ::geteuid()) make_private(folder);
  static std::atomic<bool> said{false};
  if (!why.empty() && !said.exchange(true))
    std::fprintf(stderr, "tokamak: warning: %s holds a webhook and others may read it, and it could not be made "
                 "private (%s) (hint: chmod 600 %s)\n", path.c_str(), why.c_str(), path.c_str());
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
  if (!s.webhook.empty())
    if (const std::string why = webhook_problem(s.webhook); !why.empty()) throw bad("\"webhook\": " + why);
  if (!s.webhook.empty()) keep_private(path);
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
  write_private_file(notify_settings_path(),
                     json{{"desktop", s.desktop}, {"webhook", s.webhook}, {"off", s.off}}.dump(2) + "\n");
}

std::string send_desktop(const Notice& n) {
  if (!std::getenv("DBUS_SESSION_BUS_ADDRESS")) return "no session D-Bus here (DBUS_SESSION_BUS_ADDRESS is unset)";
  // The freedesktop interface: Notify(app_name, replaces_id, icon, summary, body, actions, hints, timeout).
  ProcessResult r;
  try {
    r = run_process({"gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path",
                     "/org/freedesktop/Notifications", "--method", "org.freedesktop.Notifications.Notify",
                     "'Tokamak'", "uint32 0", "''", gvariant_string(utf8_repaired(n.title)), gvariant_string(utf8_repaired(n.body)), "@as []",
                     "@a{sv} {}", "int32 -1"},
                    {}, 5);
  } catch (const std::exception& e) {
    return std::string("gdbus could not be started (Debian: libglib2.0-bin): ") + e.what();
  }
  if (r.code == 0) return "";
  if (r.timed_out) return "the desktop's notification service did not answer within 5 s";
  std::string why = one_line(r.err.empty() ? r.out : r.err);
  if (why.empty()) why = "gdbus ended with code " + std::to_string(r.code) + " and said nothing";
  return "the desktop's notification service did not take it: " + why;
}

std::string webhook_problem(const std::string& url) {
  const size_t colon = url.find("://");
  std::string scheme = colon == std::string::npos ? "" : url.substr(0, colon);
  for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (scheme != "http" && scheme != "https")
    return "only http:// and https:// URLs are sent to (this one starts '" +
           (colon == std::string::npos ? std::string("without a scheme") : url.substr(0, colon) + "://") + "')";
  const std::string rest = url.substr(colon + 3);
  const size_t end = rest.find_first_of("/?#");
  if (rest.substr(0, end).empty()) return "the URL names no host";
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return "the URL holds a space or a control character";
  return "";
}

std::string redacted_url(const std::string& url) {
  const size_t colon = url.find("://");
  if (colon == std::string::npos || colon == 0) return "…";
  const std::string scheme = url.substr(0, colon);
  for (size_t i = 0; i < scheme.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(scheme[i]);
    if (!std::isalpha(c) && (i == 0 || (!std::isdigit(c) && c != '+' && c != '-' && c != '.'))) return "…";
  }
  const std::string unparsed = scheme + "://…";
  const std::string rest = url.substr(colon + 3);
  const size_t end = rest.find_first_of("/?#");
  std::string host = rest.substr(0, end);
  // A password may hold '/', '?' or '#' ("user:SECRET/TOKEN@host"): with an '@' past the authority, what looks
  // like the host may be the start of the credentials, so none of it is shown.
  if (end != std::string::npos && rest.find('@', end) != std::string::npos) return unparsed;
  if (const size_t at = host.rfind('@'); at != std::string::npos) host.erase(0, at + 1);
  if (host.empty()) return unparsed;
  // Only a host a resolver could take, and a numeric port: anything else may be a misplaced secret.
  const size_t port = host.front() == '[' ? host.find("]:") : host.rfind(':');
  const std::string name = host.substr(0, port == std::string::npos ? host.size() : port + (host.front() == '['));
  const std::string digits = port == std::string::npos ? "" : host.substr(port + 1 + (host.front() == '['));
  if (name.empty() || (port != std::string::npos && (digits.empty() || digits.size() > 5))) return unparsed;
  for (char ch : digits)
    if (!std::isdigit(static_cast<unsigned char>(ch))) return unparsed;
  const bool bracketed = name.size() > 2 && name.front() == '[' && name.back() == ']';
  for (size_t i = bracketed; i < name.size() - bracketed; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    const bool ok = bracketed ? std::isxdigit(c) || c == ':' || c == '.' : std::isalnum(c) || c == '.' || c == '-' || c == '_';
    if (!ok) return unparsed;
  }
  return scheme + "://" + host + (end == std::string::npos ? "" : "/…");
}

std::string send_webhook(const std::string& url, const Notice& n, const std::atomic<bool>* aborted) {
  if (const std::string why = webhook_problem(url); !why.empty()) return "the webhook was not sent: " + why;
  const std::string shown = redacted_url(url);
  // Invalid UTF-8 (a file name in an error, say) is replaced, never thrown at the sender.
  const std::string body = json{{"text", n.title + ": " + n.body},
                                {"title", n.title},
                                {"message", n.body},
                                {"kind", n.kind},
                                {"run_uid", n.run_uid},
                                {"run_name", n.run_name},
                                {"step", n.step}}
                               .dump(-1, ' ', false, json::error_handler_t::replace);
  CURL* curl = curl_easy_init();
  if (!curl) return "libcurl could not start";
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  // http and https only, and no redirect followed: a 3xx is not a delivery.
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, +[](char*, size_t size, size_t n, void*) { return size * n; });
  if (aborted) {
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(aborted));
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION,
                     +[](void* flag, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> int {
                       return static_cast<std::atomic<bool>*>(flag)->load() ? 1 : 0;
                     });
  }
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc == CURLE_ABORTED_BY_CALLBACK) return "the webhook " + shown + " was given up: the run ended first";
  if (rc != CURLE_OK) {
    std::string why = *error ? error : curl_easy_strerror(rc);
    // libcurl's messages name the host at most, but a URL it echoes must not carry the path out.
    for (size_t at; (at = why.find(url)) != std::string::npos;) why.replace(at, url.size(), shown);
    return "the webhook " + shown + " was not reached: " + why;
  }
  if (status >= 300 && status < 400)
    return "the webhook " + shown + " answered HTTP " + std::to_string(status) +
           " (a redirect, not followed: give the URL it redirects to)";
  if (status < 200 || status >= 300) return "the webhook " + shown + " answered HTTP " + std::to_string(status);
  return "";
}

std::string send_notice(const NotifySettings& s, const Notice& n, const std::atomic<bool>* aborted) {
  if (s.off.count(n.kind)) return "";
  std::string failures;
  const auto note = [&](const std::string& why) {
    if (!why.empty()) failures += (failures.empty() ? "" : "; ") + why;
  };
  try {
    if (s.desktop && std::getenv("DBUS_SESSION_BUS_ADDRESS")) note(send_desktop(n));  // a server has no desktop
    if (!s.webhook.empty()) note(send_webhook(s.webhook, n, aborted));
  } catch (const std::exception& e) {
    note(e.what());
  }
  return failures;
}

}  // namespace tokamak
