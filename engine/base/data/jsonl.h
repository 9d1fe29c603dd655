// JSON-lines files (one JSON value per line), as published corpora and HellaSwag come: read line by line so a
// large file is never held whole, with every problem a one-line error that names the file and the line.
// Blank lines (only whitespace) are allowed and skipped; line numbers count them, as an editor does.
#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/base/util/error.h"

namespace tokamak {

// Calls fn(line_number, value) for each non-blank line, 1-based. A line that is not valid JSON (or not valid
// UTF-8) throws jsonl_error naming it; so does a file that cannot be opened.
void for_each_jsonl(const std::string& path, const std::function<void(int64_t line, const nlohmann::json&)>& fn);

// "'PATH' line N: WHAT" with a hint; for the checks callers make on a line's value.
Error jsonl_error(const std::string& path, int64_t line, const std::string& what, const std::string& hint);

// The text of `field` on every line of a JSON-lines dataset: one document per line. A line that is not an
// object, lacks the field or holds something other than a string is an error naming the line.
void for_each_jsonl_document(const std::string& path, const std::string& field,
                             const std::function<void(int64_t line, const std::string& text)>& fn);

// True for a path whose name ends in .jsonl (what makes a dataset file JSON-lines).
bool is_jsonl_path(const std::string& path);

}  // namespace tokamak
