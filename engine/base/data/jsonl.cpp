// JSON-lines reading (see jsonl.h).
#include "engine/base/data/jsonl.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace tokamak {
namespace {

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n\f\v") == std::string::npos; }

// nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1, column 5: ";
// the line is ours to name, so only the part after the last ": " is kept.
std::string parse_reason(const std::exception& e) {
  std::string what = e.what();
  const size_t at = what.rfind(": ");
  return at == std::string::npos ? what : what.substr(at + 2);
}

}  // namespace

Error jsonl_error(const std::string& path, int64_t line, const std::string& what, const std::string& hint) {
  return Error("'" + path + "' line " + std::to_string(line) + ": " + what, hint);
}

void for_each_jsonl(const std::string& path, const std::function<void(int64_t, const nlohmann::json&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "': " + std::strerror(errno), "check the path and its permissions");
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (blank(text)) continue;
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw jsonl_error(path, line, "not valid JSON (" + parse_reason(e) + ")",
                        "each line must hold one JSON value; blank lines are allowed");
    }
    fn(line, value);
  }
  if (in.bad()) throw Error("cannot read '" + path + "'", "check the file and the disk");
}

void for_each_jsonl_document(const std::string& path, const std::string& field,
                             const std::function<void(int64_t, const std::string&)>& fn) {
  const std::string hint =
      "each line must be an object with a string field \"" + field + "\" (data.jsonl_field names another field)";
  for_each_jsonl(path, [&](int64_t line, const nlohmann::json& v) {
    if (!v.is_object()) throw jsonl_error(path, line, "is not a JSON object", hint);
    auto it = v.find(field);
    if (it == v.end()) throw jsonl_error(path, line, "has no field \"" + field + "\"", hint);
    if (!it->is_string()) throw jsonl_error(path, line, "field \"" + field + "\" is not a string", hint);
    fn(line, it->get_ref<const std::string&>());
  });
}

bool is_jsonl_path(const std::string& path) {
  return path.size() > 6 && path.compare(path.size() - 6, 6, ".jsonl") == 0;
}

}  // namespace tokamak
