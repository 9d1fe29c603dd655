// A local file's sha256, as the tools on both ends of a copy compute it: downloads from a host compare it with
// the host's, Hub downloads with the Hub's listing.
#pragma once
#include <string>

namespace tokamak {

// sha256 of a local file, by coreutils' sha256sum (the tool the host uses too).
std::string sha256_of_file(const std::string& path);

}  // namespace tokamak
