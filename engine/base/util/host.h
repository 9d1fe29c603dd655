// This machine's name and the wall clock, as every record of a run writes them (run folders, the store, the
// queue): one definition, below every room that records.
#pragma once
#include <string>

namespace tokamak {

double now_seconds();     // seconds since the epoch, microsecond resolution
std::string this_host();  // gethostname(), or "localhost" when it fails

}  // namespace tokamak
