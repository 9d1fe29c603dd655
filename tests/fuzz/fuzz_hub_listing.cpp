// Fuzz target: a page of the Hub's listing of a repo, as a server (or a mirror, or something that is neither)
// may send it, and the next-page URL it names. Anything but a one-line tokamak::Error is a bug; the files kept
// are top-level names, and a next page is followed only on the endpoint's own origin.
#include <cstdint>
#include <string>

#include "engine/fleet/hub/hub_listing.h"
#include "engine/base/util/error.h"
#include "tests/fuzz/fuzz_support.h"

using namespace tokamak;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  // The first line is the Link: next URL, the rest the page.
  const size_t eol = input.find('\n');
  const std::string next = input.substr(0, eol), body = eol == std::string::npos ? "" : input.substr(eol + 1);
  const std::string endpoint = "https://huggingface.co";
  try {
    for (const HubFile& f : parse_hub_listing_page(body, "o/r", endpoint + "/api/datasets/o/r/tree/main", endpoint))
      fuzz::require(!f.name.empty() && f.name.find('/') == std::string::npos, "a listed name is not a file name here");
  } catch (const Error& e) {
    fuzz::require(std::string(e.what()).find('\n') == std::string::npos, "listing error spans several lines");
  }
  if (hub_next_page_problem(next, endpoint).empty())
    fuzz::require(next.rfind(endpoint, 0) == 0 && (next.size() == endpoint.size() || next[endpoint.size()] == '/' ||
                                                   next[endpoint.size()] == '?' || next[endpoint.size()] == '#'),
                  "a next page on another origin would be followed");
  return 0;
}
