// Fuzz target: notifications.json, the file the studio's Settings ▸ Notifications writes and every run reads
// (engine/fleet/notify/notify.h). Anything but a tokamak::Error is a bug; settings that read back are sendable: their
// webhook passes the one rule (http or https, a host), and its shown form never carries the URL's path or query.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/fleet/notify/notify.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool once = [] {
    const std::string dir = fuzz::input_file(".config");
    make_dirs(dir + "/tokamak");
    ::setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
    return true;
  }();
  (void)once;
  const std::string text(reinterpret_cast<const char*>(data), size);
  FILE* f = std::fopen(notify_settings_path().c_str(), "wb");  // no fsync a run: this is a scratch folder
  fuzz::require(f != nullptr, "the scratch settings file cannot be written");
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const NotifySettings s = read_notify_settings();
    if (!s.webhook.empty()) fuzz::require(webhook_problem(s.webhook).empty(), "a webhook read back breaks the rule");
  } catch (const Error&) {
  }
  // The same bytes as a URL: the shown form is the URL up to its host, with the rest as "…".
  const std::string shown = redacted_url(text);
  const size_t scheme = text.find("://");
  if (scheme != std::string::npos) {
    const size_t rest = text.find_first_of("/?#", scheme + 3);
    if (rest != std::string::npos) fuzz::require(shown.size() <= rest + 4, "the shown URL carries its path");
  }
  (void)webhook_problem(text);
  return 0;
}
