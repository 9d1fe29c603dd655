// Config keys of older releases and the key each is now. Until the sections were split by concern, `train.*`
// held the optimizer's settings, the schedule, evaluation, samples and checkpoints, and `opt.*` the speed
// switches beside the optimizer's name; every stored run, queue row, sweep, ladder, saved setup and checkpoint
// written then still loads: the loader reads an old key as its new one.
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tokamak {

struct RenamedKey {
  const char* old_key;  // "train.lr"
  const char* key;      // "optimizer.lr"
};
const std::vector<RenamedKey>& renamed_keys();

// The current name of a dotted key: itself unless an older release called it something else.
std::string current_key(const std::string& key);

// A config object as config_to_json writes it (sections of leaves, top-level keys) with every old key moved to
// its current section. Throws tokamak::Error when a key is given under both names. Anything that is not an
// object comes back as it is.
nlohmann::json upgrade_config_json(const nlohmann::json& config);
// The same on text: JSON that does not parse, or is not an object, comes back unchanged.
std::string upgrade_config_text(const std::string& text);
// The same for a reader of stored text (runs, queue rows): a config that names a key under both names comes back
// as written, and the loader names the clash when the config is used. Stored text is never rewritten: an older
// program may still be reading it (docs/RELIABILITY.md, "Versions and migrations").
std::string current_config_text(const std::string& text);
// A sweep file's text (docs/SWEEPS.md) with its "base" upgraded and its swept keys renamed, in their order (the
// order numbers the trials); unchanged when nothing is old or it does not parse.
std::string upgrade_sweep_text(const std::string& text);

}  // namespace tokamak
