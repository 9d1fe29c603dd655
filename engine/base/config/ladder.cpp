// Ladder files (see ladder.h).
#include "engine/base/config/ladder.h"

#include <map>
#include <nlohmann/json.hpp>

#include "engine/base/config/renamed_keys.h"
#include "engine/base/util/error.h"
#include "engine/base/util/files.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

// {"a.b": 1} or {"a": {"b": 1}} → ["a.b=1"], in key order (nlohmann's object sorts them; presets first is
// apply_overrides' job).
void collect_into(const json& object, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : object.items()) {
    std::string dotted = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) collect_into(value, dotted, out);
    else out.push_back(dotted + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  }
}

// One object's keys (a rung's "set", the "base"): a key given under its old and its new name is refused, as in
// a config file (renamed_keys.h); which of the two would win is not something to leave to the order of keys.
void collect(const json& object, std::vector<std::string>& out, const std::string& where) {
  std::vector<std::string> mine;
  collect_into(object, "", mine);
  std::map<std::string, std::string> given;  // current name → the name given
  for (const std::string& kv : mine) {
    const std::string key = kv.substr(0, kv.find('='));
    auto [at, fresh] = given.emplace(current_key(key), key);
    if (!fresh && at->second == key)
      throw Error(where + ": config key '" + key + "' is given twice", "keep only one of them");
    if (!fresh) {
      const std::string now = at->first, old = at->second == now ? key : at->second;
      throw Error(where + ": config key '" + old + "' is the old name of '" + now + "', which is given too",
                  "keep only '" + now + "'");
    }
  }
  out.insert(out.end(), mine.begin(), mine.end());
}

}  // namespace

static Ladder ladder_from_json(const json& root, const std::string& path, const std::vector<std::string>& overrides) {
  Ladder ladder;
  ladder.name = root.value("name", path);
  ladder.description = root.value("description", "");
  const bool cumulative = root.value("cumulative", true);
  std::vector<std::string> base;
  if (root.contains("base")) collect(root["base"], base, "ladder '" + path + "', base");
  std::vector<std::string> carried = base;
  for (const json& r : root["rungs"]) {
    if (!r.is_object() || !r.contains("name"))
      throw Error("ladder '" + path + "': every rung needs a \"name\"", "write {\"name\": ..., \"set\": {...}}");
    std::vector<std::string> keys = cumulative ? carried : base;
    if (r.contains("set")) collect(r["set"], keys,
                                    "ladder '" + path + "', rung '" +
                                        (r["name"].is_string() ? r["name"].get<std::string>() : r["name"].dump()) + "'");
    if (cumulative) carried = keys;
    keys.insert(keys.end(), overrides.begin(), overrides.end());
    LadderRung rung;
    rung.name = r["name"].get<std::string>();
    try {
      apply_overrides(rung.config, keys);
    } catch (const Error& e) {
      throw Error("ladder '" + path + "', rung '" + rung.name + "': " + e.message(), e.hint());
    }
    ladder.rungs.push_back(std::move(rung));
  }
  return ladder;
}

Ladder load_ladder(const std::string& path, const std::vector<std::string>& overrides) {
  json root;
  try {
    root = json::parse(read_file(path));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e999
    throw Error("ladder '" + path + "' is not valid JSON: " + e.what(), "see resources/ladders/ for examples");
  }
  if (!root.is_object() || !root.contains("rungs") || !root["rungs"].is_array() || root["rungs"].empty())
    throw Error("ladder '" + path + "' has no \"rungs\" list", "see resources/ladders/ for the format");
  try {
    return ladder_from_json(root, path, overrides);
  } catch (const json::exception& e) {  // a field of the wrong type ("name": {}, "cumulative": "yes", ...)
    throw Error("ladder '" + path + "' has a field of the wrong type: " + e.what(),
                "names are strings, \"cumulative\" is true or false; see resources/ladders/");
  }
}

}  // namespace tokamak
