// Pages of the Hub's listing (see hub_listing.h).
#include "engine/fleet/hub/hub_listing.h"

#include <nlohmann/json.hpp>

#include "engine/base/util/error.h"
#include "engine/base/util/utf8.h"

namespace tokamak {
namespace {

using json = nlohmann::json;

bool lfs_oid_ok(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// "https://host:port" of a URL ("" when it has none): what must match for the token to go along.
std::string url_origin(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return {};
  const size_t end = url.find_first_of("/?#", scheme + 3);
  return url.substr(0, end);
}

}  // namespace

std::vector<HubFile> parse_hub_listing_page(const std::string& body, const std::string& repo, const std::string& url,
                                            const std::string& endpoint) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_array())
    throw Error("the Hub's listing of " + repo + " is not a JSON list (" + url + ")",
                "is HF_ENDPOINT (" + endpoint + ") a Hugging Face Hub?");
  const auto refuse = [&](const std::string& what) {
    throw Error("the Hub's listing of " + repo + " has an entry this version cannot read (" + what + ", " + url + ")",
                "is HF_ENDPOINT (" + endpoint + ") a Hugging Face Hub?");
  };
  std::vector<HubFile> files;
  for (const json& e : j) {
    if (!e.is_object() || !e.contains("type") || e["type"] != "file") continue;
    if (!e.contains("path") || !e["path"].is_string()) refuse("a file without a path");
    HubFile f;
    f.name = e["path"].get<std::string>();
    // A size that is not a whole non-negative number would be cast: a float past 2^64 is undefined behaviour.
    if (e.contains("size") && !e["size"].is_number_unsigned())
      refuse("\"" + printable(f.name, 120) + "\" has size " + e["size"].dump());
    if (e.contains("size")) f.size = e["size"].get<uint64_t>();
    if (e.contains("lfs") && e["lfs"].is_object()) {
      const json& lfs = e["lfs"];
      if (lfs.contains("oid") && !(lfs["oid"].is_string() && lfs_oid_ok(lfs["oid"].get<std::string>())))
        refuse("\"" + printable(f.name, 120) + "\" has an lfs oid that is not a sha256");
      if (lfs.contains("size") && !lfs["size"].is_number_unsigned())
        refuse("\"" + printable(f.name, 120) + "\" has lfs size " + lfs["size"].dump());
      if (lfs.contains("oid")) f.sha256 = lfs["oid"].get<std::string>();
      if (lfs.contains("size")) f.size = lfs["size"].get<uint64_t>();
    }
    // Top-level files only: a name with a folder in it, or one that is no file name here, is left out.
    if (!f.name.empty() && f.name.find('/') == std::string::npos && f.name != "." && f.name != ".." &&
        f.name.find('\0') == std::string::npos)
      files.push_back(f);
  }
  return files;
}

std::string hub_next_page_problem(const std::string& next, const std::string& endpoint) {
  const std::string here = url_origin(endpoint), there = url_origin(next);
  if (there.empty() || there != here)
    return "its next page is at " + (there.empty() ? "'" + next.substr(0, 80) + "'" : there) + ", not at " + here +
           ", where the token may go";
  return {};
}

}  // namespace tokamak
