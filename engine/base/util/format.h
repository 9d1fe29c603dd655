// The one way a size in bytes or a large count is written for a reader: the CLI's lines, the studio, the
// scoreboards and the errors all use these, so the same number reads the same everywhere. LibTorch-free.
#pragma once
#include <string>

namespace tokamak {

// Bytes in decimal units, as disks, downloads and GPU datasheets write them, to three significant digits:
// "512 B", "12.3 kB", "456 MB", "1.23 GB", "4.56 TB"; "-" for NaN.
std::string format_bytes(double bytes);

// A count with a K, M, B or T suffix, to three significant digits: "950", "12.5K", "142K", "124M",
// "1.56B"; "-" for NaN.
std::string format_count(double count);
// "1h05m", "12m30s", "42 s": a time left or taken, to the second below a minute.
std::string format_duration(double seconds);

}  // namespace tokamak
