// Telling the person: a desktop notification (the freedesktop Notifications interface on the session D-Bus, sent
// with GLib's `gdbus`) and an optional webhook (a JSON POST through libcurl, ntfy/Slack-style) when a run finishes,
// fails, stops, spikes, slows down, stalls or reaches its target. What is sent, and where, is the user's file
// notifications.json in Tokamak's config folder (the studio's Settings writes it; the CLI and the queue's worker
// read it too, so a run tells whether the studio is open or not).
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/core/run/events.h"

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
void write_notify_settings(const NotifySettings& s);  // written to a temporary file, then renamed
// Every kind a notification can be about, in the order Settings lists them.
const std::vector<std::string>& notify_kinds();

struct Notice {
  std::string kind;  // one of notify_kinds()
  std::string title, body;
  std::string run_uid, run_name;
  int64_t step = 0;
};

// "" when sent, else why not (no session bus, no notification daemon, the URL refused it), in one line.
std::string send_desktop(const Notice& n);
std::string send_webhook(const std::string& url, const Notice& n);
// Both, as the settings say (a kind turned off sends nothing; the desktop only where a session bus is); returns the
// failures, "; "-joined.
std::string send_notice(const NotifySettings& s, const Notice& n);

// The sink that sends them for a run of this process (rank 0): its end, spikes, slowdowns and the target reached.
// Each kind at most once a minute (a run that keeps spiking is one notice, then its failure).
class NotifySink : public EventSink {
 public:
  explicit NotifySink(NotifySettings settings) : settings_(std::move(settings)) {}
  void on_start(const RunStart& e) override { uid_ = e.run_uid, name_ = e.name; }
  void on_eval(const EvalEvent& e) override;
  void on_spike(const SpikeEvent& e) override;
  void on_alert(const AlertEvent& e) override;
  void on_end(const EndEvent& e) override;
  const std::string& last_failure() const { return failure_; }
  // A follower reading a journal's backlog (events from before it came) takes the run's name from it but sends
  // nothing for it: attaching to a run tells of what happens from then on.
  void set_muted(bool muted) { muted_ = muted; }

 private:
  void send(const std::string& kind, int64_t step, const std::string& title, const std::string& body);
  NotifySettings settings_;
  std::string uid_, name_, failure_;
  std::map<std::string, double> last_sent_;
  bool muted_ = false;
};

}  // namespace tokamak
