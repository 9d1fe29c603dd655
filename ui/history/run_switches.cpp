// Summarises a run's speed.* keys (the speed-up switches; a run stored by an older release named them opt.*, which
// the flattening reads under today's names) against the defaults of this build (engine/base/config), using the
// scoreboard's flattening so that the values read the way `tokamak runs compare` prints them.
#include "ui/history/run_switches.h"

#include <QStringList>
#include <map>
#include <string>

#include "engine/base/config/config.h"
#include "engine/base/store/scoreboard.h"

namespace tokamak::ui {

namespace {

const std::map<std::string, std::string>& defaultOptions() {
  static const std::map<std::string, std::string> defaults =
      tokamak::flatten_config(tokamak::config_to_json(tokamak::Config{}));
  return defaults;
}

// "speed.fused_adamw" -> "fused-adamw": the word people use for the switch.
QString switchWord(const std::string& key) {
  return QString::fromStdString(key.substr(key.find('.') + 1)).replace(QLatin1Char('_'), QLatin1Char('-'));
}

}  // namespace

QString switchesSummary(const QString& configJson) {
  const auto config = tokamak::flatten_config(configJson.toStdString());
  if (config.empty()) return QString();
  QStringList parts;
  for (const auto& [key, value] : config) {
    if (key.rfind("speed.", 0) != 0) continue;
    auto def = defaultOptions().find(key);
    if (def != defaultOptions().end() && def->second == value) continue;
    // Booleans read as the switch's name (on) or "no-name" (off); modes read as their value.
    if (value == "true") parts << switchWord(key);
    else if (value == "false") parts << QStringLiteral("no-") + switchWord(key);
    else parts << QString::fromStdString(value);
  }
  return parts.isEmpty() ? QStringLiteral("defaults") : parts.join(QStringLiteral(", "));
}

}  // namespace tokamak::ui
