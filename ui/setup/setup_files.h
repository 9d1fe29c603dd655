// Setup files the studio reads and writes: a saved setup (the config as JSON, config_to_json) and a ladder
// from resources/ladders/ — {"name": .., "base": {config keys, dotted or nested}, "rungs": [{"name": ..,
// "set": {"speed.precision": "bf16", ..}}]}, read by the engine's load_ladder. Loaders return false with a
// message, never throw.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <string>

#include "engine/base/config/config.h"

namespace tokamak::ui {

// REPLACE: an existing file may be replaced (the save dialog asked); never one that is not a plain .json file.
bool saveSetup(const QString& path, const Config& config, QString* error, bool replace = false);
bool loadSetup(const QString& path, Config* config, QString* error);

// The setup to save on close: NOW (today's config as JSON), plus the keys this version left out when it loaded the
// saved setup SAVED (a later version's key) that NOW does not hold, so that opening this studio does not take them
// away.
std::string setupWithLeftOutKeys(const std::string& now, const std::string& saved, const QStringList& keys);

// The rungs of a ladder file, each a full config (engine/base/config/ladder.h: "cumulative" ladders build each
// rung on the one before). A rung without a run name gets "<ladder>/<rung>", so its runs are told apart.
bool readLadder(const QString& path, QString* ladderName, QStringList* rungNames, QList<Config>* configs,
                QString* error);

}  // namespace tokamak::ui
