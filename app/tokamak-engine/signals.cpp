// StopOnSignals and CountSignals (see signals.h). The handlers only touch lock-free atomics and call
// async-signal-safe functions (sigaction, raise).
#include "app/tokamak-engine/signals.h"

#include <csignal>

namespace tokamak::cli {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = sizeof kStopSignals / sizeof kStopSignals[0];

std::atomic<bool>* g_stop = nullptr;
std::atomic<int>* g_count = nullptr;
std::atomic<int> g_seen{0};
struct sigaction g_previous[kCount];

void set_handler(void (*handler)(int)) {
  for (int k = 0; k < kCount; ++k) {
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // a signal during a blocking read or write does not turn into EINTR errors
    sigaction(kStopSignals[k], &sa, &g_previous[k]);
  }
}

void restore() {
  for (int k = 0; k < kCount; ++k) sigaction(kStopSignals[k], &g_previous[k], nullptr);
}

void on_stop_signal(int sig) {
  if (g_seen.fetch_add(1) == 0) {
    if (g_stop) g_stop->store(true);
    return;
  }
  // The second signal: the default action of this very signal ends the process the way the user asked.
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
  raise(sig);
}

void on_count_signal(int) {
  if (g_count) g_count->fetch_add(1);
}

}  // namespace

StopOnSignals::StopOnSignals(std::atomic<bool>* stop) {
  g_stop = stop;
  g_seen.store(0);
  set_handler(on_stop_signal);
}

StopOnSignals::~StopOnSignals() {
  restore();
  g_stop = nullptr;
}

CountSignals::CountSignals(std::atomic<int>* count) {
  g_count = count;
  set_handler(on_count_signal);
}

CountSignals::~CountSignals() {
  restore();
  g_count = nullptr;
}

void ignore_broken_pipes() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace tokamak::cli
