// Fields of a JSON line that another machine's tokamak printed (a result, a progress line). That machine may
// run another version: a field that is missing or of another type is a one-line Error naming the field and
// the host, never nlohmann's "[json.exception.type_error.302] ...".
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "engine/base/util/error.h"

namespace tokamak {

template <class T>
T host_field(const nlohmann::json& j, const char* key, const std::string& host) {
  const auto refuse = [&](const std::string& what) -> T {
    throw Error("tokamak on " + host + " printed a result this version cannot read (" + what + ")",
                "is it the same version as this one? (`tokamak remote test --host " + host + "`)");
  };
  if (!j.is_object() || !j.contains(key)) return refuse(std::string("no \"") + key + "\"");
  const nlohmann::json& v = j[key];
  // get<> converts between number types without a word: a negative or fractional count is refused here.
  const bool fits = std::is_same_v<T, std::string> ? v.is_string()
                    : std::is_same_v<T, bool>      ? v.is_boolean()
                    : std::is_floating_point_v<T>  ? v.is_number()
                    : std::is_unsigned_v<T>        ? v.is_number_unsigned()
                                                   : v.is_number_integer();
  if (!fits) return refuse(std::string("\"") + key + "\" is " + v.dump().substr(0, 40));
  return v.get<T>();
}

}  // namespace tokamak
