// One page of the Hub's listing of a dataset repo (GET /api/datasets/REPO/tree/main: a JSON list of
// {"type": "file", "path", "size", "lfs": {"oid", "size"}}), and which next page may be followed. Apart from the
// fetcher so that a fuzz target reaches it without the network (tests/fuzz/fuzz_hub_listing.cpp).
#pragma once
#include <string>
#include <vector>

#include "engine/fleet/hub/hub_files.h"

namespace tokamak {

// The most pages a listing is followed for: a server whose "next" never ends would be followed forever.
constexpr int kMaxHubListingPages = 1000;

// The top-level files of one page (folders and nested paths left out). A page that is not a JSON list, or an
// entry with a field of the wrong type (a name that is not a string, a size that is not a byte count, an lfs
// oid that is not a sha256), is a one-line Error naming REPO and URL.
std::vector<HubFile> parse_hub_listing_page(const std::string& body, const std::string& repo, const std::string& url,
                                            const std::string& endpoint);

// "" when the listing's Link: rel="next" URL may be followed from ENDPOINT: on the same origin (scheme, host and
// port; the token goes with every request of the listing). Else why not, for an Error.
std::string hub_next_page_problem(const std::string& next, const std::string& endpoint);

}  // namespace tokamak
