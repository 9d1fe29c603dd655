// Telling the person: a desktop notification (the freedesktop Notifications interface on the session D-Bus, sent
// with GLib's `gdbus`) and an optional webhook (a JSON POST through libcurl, ntfy/Slack-style) when a run finishes,
// fails, stops, spikes, slows down, stalls or reaches its target. What is sent, and where, is the user's file
// notifications.json in Tokamak's config folder (the studio's Settings writes it; the CLI and the queue's worker
// read it too, so a run tells whether the studio is open or not).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tokamak {

struct NotifySettings {
  bool desktop = true;
  std::string webhook;        // "" = none; http(s)://…
  std::set<std::string> off;  // kinds not sent: finished, failed, stopped, spike, slowdown, stalled, target
};

// $XDG_CONFIG_HOME/tokamak/notifications.json (~/.config/… by default).
std::string notify_settings_path();
// The defaults when the file is missing; a file that is not such JSON throws an Error naming it.
NotifySettings read_notify_settings();
// Written to a temporary file, then renamed; 0600 in a 0700 folder (the webhook URL is often the secret).
void write_notify_settings(const NotifySettings& s);
// Every kind a notification can be about, in the order Settings lists them.
const std::vector<std::string>& notify_kinds();

struct Notice {
  std::string kind;  // one of notify_kinds()
  std::string title, body;
  std::string run_uid, run_name;
  int64_t step = 0;
};

// "" when URL may be a webhook: http or https (in any case), with a host; else why not, in one line that does
// not repeat the URL (it may be the secret itself).
std::string webhook_problem(const std::string& url);
// The URL as it may be shown: scheme and host, the path and query (Slack's, Discord's and ntfy's secret) as "…".
std::string redacted_url(const std::string& url);

// "" when sent, else why not (no session bus, no notification daemon, the URL refused it), in one line, never
// with the webhook's path or query. Neither throws. ABORTED, when given and set, makes a webhook in flight give up.
std::string send_desktop(const Notice& n);
std::string send_webhook(const std::string& url, const Notice& n, const std::atomic<bool>* aborted = nullptr);
// Both, as the settings say (a kind turned off sends nothing; the desktop only where a session bus is); returns the
// failures, "; "-joined.
std::string send_notice(const NotifySettings& s, const Notice& n, const std::atomic<bool>* aborted = nullptr);

}  // namespace tokamak
